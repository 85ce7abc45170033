#include "odbatch/text/tokenize_result.hpp"

namespace odbatch {

std::string_view to_string(TokenizeErrorReason reason) {
  switch (reason) {
    case TokenizeErrorReason::over_length:
      return "over_length";
    case TokenizeErrorReason::no_supervised_tokens:
      return "no_supervised_tokens";
    case TokenizeErrorReason::image_mismatch:
      return "image_mismatch";
    case TokenizeErrorReason::unsupported_roles:
      return "unsupported_roles";
    case TokenizeErrorReason::special_piece_in_text:
      return "special_piece_in_text";
    case TokenizeErrorReason::template_refused:
      return "template_refused";
  }
  return "unknown";
}

}  // namespace odbatch
