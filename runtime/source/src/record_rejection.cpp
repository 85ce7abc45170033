#include "odbatch/source/record_rejection.hpp"

namespace odbatch {

std::string_view to_string(RecordRejectReason reason) {
  switch (reason) {
    case RecordRejectReason::record_too_long:
      return "record_too_long";
    case RecordRejectReason::invalid_utf8:
      return "invalid_utf8";
    case RecordRejectReason::malformed_json:
      return "malformed_json";
    case RecordRejectReason::not_an_object:
      return "not_an_object";
    case RecordRejectReason::missing_field:
      return "missing_field";
    case RecordRejectReason::wrong_type:
      return "wrong_type";
    case RecordRejectReason::bad_field:
      return "bad_field";
    case RecordRejectReason::unknown_role:
      return "unknown_role";
    case RecordRejectReason::empty_conversation:
      return "empty_conversation";
    case RecordRejectReason::empty_content:
      return "empty_content";
    case RecordRejectReason::no_assistant_turn:
      return "no_assistant_turn";
    case RecordRejectReason::placeholder_mismatch:
      return "placeholder_mismatch";
    case RecordRejectReason::bad_image_path:
      return "bad_image_path";
    case RecordRejectReason::missing_member:
      return "missing_member";
    case RecordRejectReason::duplicate_member:
      return "duplicate_member";
    case RecordRejectReason::key_collision:
      return "key_collision";
    case RecordRejectReason::damaged_shard:
      return "damaged_shard";
  }
  return "?";
}

}  // namespace odbatch
