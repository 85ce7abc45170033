#include "odbatch/core/screening.hpp"

namespace odbatch {

bool exceeds_budget(const SampleCost& s, const BatchingConfig& c) {
  return s.tokens > c.token_budget || (c.patch_budget > 0 && s.patches > c.patch_budget);
}

Screening screen_sample(const SampleCost& s, const BatchingConfig& c) {
  using V = Screening::Verdict;
  if (s.tokens == 0) return {V::reject, 0, RejectReason::empty_sample};
  if (s.tokens > c.max_seq_len) {
    if (c.over_length == OverLengthPolicy::reject) return {V::reject, 0, RejectReason::over_length};
    return {V::truncate, c.max_seq_len, RejectReason::over_length};
  }
  if (s.labels == 0 && c.zero_labels == ZeroLabelPolicy::reject)
    return {V::reject, 0, RejectReason::no_labels};
  if (exceeds_budget(s, c) && c.over_budget == OverBudgetPolicy::reject)
    return {V::reject, 0, RejectReason::over_budget};
  return {};
}

}  // namespace odbatch
