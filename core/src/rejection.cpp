#include "odbatch/core/rejection.hpp"

namespace odbatch {

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::empty_sample:
      return "empty_sample";
    case RejectReason::over_length:
      return "over_length";
    case RejectReason::over_budget:
      return "over_budget";
    case RejectReason::no_labels:
      return "no_labels";
  }
  return "?";
}

}  // namespace odbatch
