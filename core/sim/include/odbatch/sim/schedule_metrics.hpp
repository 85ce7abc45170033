#pragma once
// What a schedule costs under the step cost model, and how well its batches are filled.
#include <array>
#include <cstdint>
#include <span>

#include "odbatch/core/config.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/sim/schedule.hpp"
#include "odbatch/sim/step_cost_model.hpp"

namespace odbatch {

// Batch fill: a group's cost (padded |g| * max L, packed sum L) over the token budget, in tenths;
// the last bin holds groups over the budget (over-budget singletons, or fixed batches too large
// for the budget's memory).
inline constexpr std::size_t kFillBins = 11;

struct ScheduleMetrics {
  std::uint64_t steps = 0;
  std::uint64_t samples = 0;        // emitted
  std::uint64_t tokens = 0;         // real tokens: sum L
  std::uint64_t padded_tokens = 0;  // sum over groups of |g| * max L
  std::uint64_t groups = 0;         // non-IDLE rank-steps
  std::uint64_t idle_rank_steps = 0;
  double seconds = 0.0;  // the simulated epoch
  double compute_seconds = 0.0;
  double communication_seconds = 0.0;
  double optimizer_seconds = 0.0;
  double samples_per_second = 0.0;
  double tokens_per_second = 0.0;
  double padding_efficiency = 1.0;  // tokens / padded tokens
  double idle_fraction = 0.0;       // IDLE rank-steps / all rank-steps
  double rank_imbalance = 1.0;      // sum over steps of max_r t_r / sum over steps of mean_r t_r
  double mean_fill = 0.0;           // mean group cost / token budget
  std::array<std::uint64_t, kFillBins> fill_histogram{};  // groups per fill bin
};

ScheduleMetrics measure_schedule(const Schedule& schedule, std::span<const SampleCost> samples,
                                 const StepCostModel& model, const ClusterShape& cluster,
                                 const BatchingConfig& config);

}  // namespace odbatch
