#pragma once
// Why a sample left the epoch without being emitted. Every rejection is counted and reported.
#include <cstdint>
#include <string>
#include <string_view>

#include "odbatch/core/sample.hpp"

namespace odbatch {

enum class RejectReason : std::uint8_t {
  empty_sample,  // no tokens after preprocessing
  over_length,   // longer than max_seq_len under over_length = reject
  over_budget,   // longer than token_budget (or patch_budget) under over_budget = reject
  no_labels,     // no supervised position under zero_labels = reject
};

std::string_view to_string(RejectReason reason);

// A sample that left the epoch unemitted. `reason` is a stable category name: one of
// RejectReason's, or a preprocessing stage's (a malformed record, a corrupt image, ...).
struct Rejection {
  SampleId id = 0;
  std::string reason;
  std::string detail;  // where and what, for the user

  friend bool operator==(const Rejection&, const Rejection&) = default;
};

}  // namespace odbatch
