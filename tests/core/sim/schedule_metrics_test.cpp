#include "odbatch/sim/schedule_metrics.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace odbatch {
namespace {

// t_r = 1 + 0.1 * tokens; all-reduce 2 * 1/2 * 0.5e9 / 1e9 = 0.5 s and optimizer 0.2 / 2 = 0.1 s
// per step on one node of two ranks.
StepCostModel linear_model() {
  StepCostModel m;
  m.fixed_seconds = 1.0;
  m.seconds_per_token = 0.1;
  m.gradient_bytes = 0.5e9;
  m.intra_node_bus_bytes_per_second = 1e9;
  m.inter_node_bytes_per_second = 1e9;
  m.unsharded_optimizer_seconds = 0.2;
  return m;
}

BatchingConfig budget(std::uint32_t token_budget, BudgetMode mode) {
  BatchingConfig c;
  c.token_budget = token_budget;
  c.budget_mode = mode;
  return c;
}

}  // namespace

TEST_CASE("schedule metrics on a hand-checked two-rank epoch") {
  // Lengths by index: 4 2 6 3. Rank 0 runs {0,1} then {2}; rank 1 runs {3} then IDLE.
  const std::vector<SampleCost> samples{{0, 4, 2, 0}, {1, 2, 1, 0}, {2, 6, 3, 0}, {3, 3, 1, 0}};
  const Schedule s{{{{0, 1}, {2}}, {{3}, {}}}};
  const ClusterShape cluster{1, 2};

  // Padded: step 0: rank 0 {4,2} pads to 8 tokens, 1.8 s; rank 1 {3}, 1.3 s.
  //         step 1: rank 0 {6}, 1.6 s; rank 1 IDLE (two tokens), 1.2 s.
  const auto m =
      measure_schedule(s, samples, linear_model(), cluster, budget(25, BudgetMode::padded));
  CHECK(m.steps == 2);
  CHECK(m.samples == 4);
  CHECK(m.groups == 3);
  CHECK(m.idle_rank_steps == 1);
  CHECK(m.tokens == 15);
  CHECK(m.padded_tokens == 8 + 3 + 6);
  CHECK(m.compute_seconds == doctest::Approx(1.8 + 1.6));
  CHECK(m.communication_seconds == doctest::Approx(2 * 0.5));
  CHECK(m.optimizer_seconds == doctest::Approx(2 * 0.1));
  CHECK(m.seconds == doctest::Approx(4.6));
  CHECK(m.samples_per_second == doctest::Approx(4 / 4.6));
  CHECK(m.tokens_per_second == doctest::Approx(15 / 4.6));
  CHECK(m.padding_efficiency == doctest::Approx(15.0 / 17.0));
  CHECK(m.idle_fraction == doctest::Approx(0.25));
  // Means over ranks: 1.55 and 1.4.
  CHECK(m.rank_imbalance == doctest::Approx(3.4 / 2.95));
  // Fills 8/25, 3/25, 6/25: bins 3, 1 and 2.
  CHECK(m.mean_fill == doctest::Approx(17.0 / 75.0));
  CHECK(m.fill_histogram == std::array<std::uint64_t, kFillBins>{0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0});

  // Packed: rank 0's first step costs 1 + 0.1 * 6 = 1.6 s, its fill 6/25 (bin 2).
  const auto p =
      measure_schedule(s, samples, linear_model(), cluster, budget(25, BudgetMode::packed));
  CHECK(p.compute_seconds == doctest::Approx(1.6 + 1.6));
  CHECK(p.fill_histogram == std::array<std::uint64_t, kFillBins>{0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0});

  // Over the budget (8 > 5, 6 > 5): the last bin.
  const auto over =
      measure_schedule(s, samples, linear_model(), cluster, budget(5, BudgetMode::padded));
  CHECK(over.fill_histogram[kFillBins - 1] == 2);
  CHECK(over.fill_histogram[6] == 1);  // 3 / 5
}

}  // namespace odbatch
