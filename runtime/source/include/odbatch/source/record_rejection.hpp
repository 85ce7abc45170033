#pragma once
// Why a dataset record was rejected before tokenization. The reasons are counted by name in the
// ledger, so each is a stable category; the message says where and what for the user.
#include <cstdint>
#include <string>
#include <string_view>

namespace odbatch {

enum class RecordRejectReason : std::uint8_t {
  record_too_long,       // longer than the reader's byte limit; never parsed
  invalid_utf8,          // bytes that are not UTF-8 (e.g. Latin-1 text)
  malformed_json,        // not valid JSON
  not_an_object,         // valid JSON, but not an object
  missing_field,         // neither `conversations` nor `messages`, or a required key is absent
  wrong_type,            // a key holds a value of the wrong JSON type
  bad_field,             // an unsupported value, or keys that exclude each other
  unknown_role,          // a `from` / `role` outside the known speakers
  empty_conversation,    // no messages
  empty_content,         // a user or assistant message that is empty or only whitespace
  no_assistant_turn,     // no assistant message: nothing to supervise
  placeholder_mismatch,  // `<image>` placeholders do not match the images one to one
  bad_image_path,        // an image path that is empty, absolute, leaves the image root, or a URL
  // Tar shards (WebDataset):
  missing_member,    // a sample without its conversation member, or an image it names
  duplicate_member,  // a sample with two members of the same extension
  key_collision,     // a sample whose key an earlier sample of the shard already had
  damaged_shard,     // a tar header that is not one, or a shard that ends inside a member
};
// The last reason, for code that lists them all.
inline constexpr RecordRejectReason kLastRecordRejectReason = RecordRejectReason::damaged_shard;

std::string_view to_string(RecordRejectReason reason);

struct RecordRejection {
  RecordRejectReason reason = RecordRejectReason::malformed_json;
  std::string message;  // begins with the record's location, e.g. "train.jsonl:12: "

  friend bool operator==(const RecordRejection&, const RecordRejection&) = default;
};

}  // namespace odbatch
