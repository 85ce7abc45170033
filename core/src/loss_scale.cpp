#include "odbatch/core/loss_scale.hpp"

namespace odbatch {

double loss_scale(LossScaling mode, std::uint32_t world_size, const StepGroup& local,
                  const StepTotals& totals) {
  if (local.idle()) return 0.0;
  std::uint64_t mine = 0, all = 0;
  switch (mode) {
    case LossScaling::none:
      return 1.0;
    case LossScaling::samples:
      mine = local.count;
      all = totals.samples;
      break;
    case LossScaling::tokens:
      mine = local.sum_tokens;
      all = totals.tokens;
      break;
    case LossScaling::labels:
      mine = local.sum_labels;
      all = totals.labels;
      break;
  }
  if (all == 0) return 0.0;
  return static_cast<double>(world_size) * static_cast<double>(mine) / static_cast<double>(all);
}

}  // namespace odbatch
