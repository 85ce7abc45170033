#include "rejection_reasons.hpp"

#include <cstdint>
#include <set>
#include <string_view>

#include "odbatch/core/rejection.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/source/record_rejection.hpp"
#include "odbatch/text/tokenize_result.hpp"

namespace odbatch::actors {
namespace {

// The names of an enum's values from 0 on. Each of these enums numbers its values from 0 without
// gaps, far below 255, and its to_string has one fallback name for any other value (what 255
// gets), so the values up to the first with that name are all of them, later additions included.
template <class Reason>
void add_names(std::set<std::string>& names) {
  static_assert(sizeof(Reason) == 1);
  const std::string_view fallback = to_string(static_cast<Reason>(255));
  for (unsigned value = 0; value < 255; ++value) {
    const std::string_view name = to_string(static_cast<Reason>(value));
    if (name == fallback) return;
    names.emplace(name);
  }
}

}  // namespace

std::vector<std::string> rejection_reasons() {
  std::set<std::string> names;
  add_names<RecordRejectReason>(names);
  add_names<ImageErrorKind>(names);
  add_names<TokenizeErrorReason>(names);
  add_names<RejectReason>(names);
  return {names.begin(), names.end()};
}

}  // namespace odbatch::actors
