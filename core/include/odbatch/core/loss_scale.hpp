#pragma once
// Loss scale of one rank at one step, so that a mean gradient all-reduce over W ranks yields the
// gradient of the loss normalised over the whole global step.
#include <cstdint>

#include "odbatch/core/config.hpp"
#include "odbatch/core/plan.hpp"

namespace odbatch {

// mode none: 1; samples: W*n_r/samples; tokens: W*L_r/tokens; labels: W*labels_r/labels.
// IDLE steps, and steps whose global denominator is 0, get 0.
double loss_scale(LossScaling mode, std::uint32_t world_size, const StepGroup& local,
                  const StepTotals& totals);

}  // namespace odbatch
