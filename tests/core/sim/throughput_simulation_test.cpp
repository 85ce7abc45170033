// The simulator's accounting on every scheduler: every sample emitted exactly once, the same
// number of steps on every rank, nothing lost, for even and uneven shards and every world size.
#include "odbatch/sim/throughput_simulation.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "odbatch/sim/odb_simulation.hpp"
#include "odbatch/sim/offline_oracles.hpp"
#include "odbatch/sim/synthetic_workload.hpp"

namespace odbatch {
namespace {

ThroughputSetup small_setup(std::uint32_t nodes, std::uint32_t ranks_per_node) {
  ThroughputSetup s;
  s.batching.token_budget = 4096;
  s.batching.window = 64;
  s.cluster = {nodes, ranks_per_node};
  s.cost_model = *cost_model_preset("2b");
  s.seed = 5;
  return s;
}

}  // namespace

TEST_CASE("shard_epoch is a permutation split into near-equal contiguous shards") {
  const auto shards = shard_epoch(10, 3, 1);
  REQUIRE(shards.size() == 3);
  CHECK(shards[0].size() == 3);
  CHECK(shards[1].size() == 3);
  CHECK(shards[2].size() == 4);
  std::vector<std::uint32_t> all;
  for (const auto& s : shards) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  std::vector<std::uint32_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0u);
  CHECK(all == expected);
  CHECK(shard_epoch(10, 3, 1) == shards);
  CHECK(shard_epoch(10, 3, 2) != shards);
  CHECK_THROWS_AS(shard_epoch(10, 0, 1), std::invalid_argument);
}

TEST_CASE("simulation batching accepts every sample as it is") {
  const std::vector<SampleCost> samples{{0, 9000, 0, 0}, {1, 10, 5, 0}};
  BatchingConfig c;
  c.max_seq_len = 4096;
  c.over_budget = OverBudgetPolicy::reject;
  const auto s = simulation_batching(c, samples);
  CHECK(s.max_seq_len == 9000);
  CHECK(s.zero_labels == ZeroLabelPolicy::keep);
  CHECK(s.over_budget == OverBudgetPolicy::singleton);
}

TEST_CASE("every scheduler emits every sample once with equal steps on every rank") {
  const std::vector<LengthDistribution> lengths{LognormalLengths{300, 0.3},
                                                LognormalLengths{600, 1.0}, BimodalLengths{}};
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> clusters{{1, 1}, {1, 3}, {2, 4}};
  for (std::size_t d = 0; d < lengths.size(); ++d)
    for (const auto& [nodes, per_node] : clusters) {
      // 1,001 samples: shards are uneven for 3 and 8 ranks; some lengths exceed the budget.
      const auto samples = synthetic_samples(lengths[d], 1001, d + 1, 16384);
      const auto setup = small_setup(nodes, per_node);
      const auto c = compare_throughput(samples, setup);
      CAPTURE(d);
      CAPTURE(nodes);
      CAPTURE(per_node);
      REQUIRE(c.results.size() == 4 + 4);
      for (const auto& r : c.results) {
        CAPTURE(r.name);
        CHECK(r.accounting.ok());
        CHECK(r.accounting.lost() == 0);
        CHECK(r.accounting.emitted == samples.size());
        CHECK(r.metrics.samples == samples.size());
        CHECK(r.audit_problems == 0);
        CHECK(r.failure.empty());
        CHECK(r.metrics.seconds > 0);
      }
      const auto world = setup.cluster.world();
      CHECK(c.results[0].name == "Standard bs=1");
      CHECK(c.results[0].speedup == doctest::Approx(1.0));
      CHECK(c.results[0].metrics.steps == (samples.size() + world - 1) / world);
      CHECK(c.results[4].kind == SchedulerKind::gmt);
      CHECK(c.results[4].metrics.steps == c.gmt_steps);
      CHECK(c.results[5].kind == SchedulerKind::bmt);
      CHECK(c.results[6].kind == SchedulerKind::odb_reference);
      CHECK(c.results[7].kind == SchedulerKind::odb_balanced);
      // No scheme that keeps samples on their rank beats LB.
      CHECK(c.results[6].metrics.steps >= c.lb_steps);
      CHECK(c.results[7].metrics.steps >= c.lb_steps);
      std::uint64_t deferrals = 0;
      for (auto n : c.results[7].deferral_histogram) deferrals += n;
      CHECK(deferrals == samples.size());
      CHECK(c.results[7].deferral_histogram.size() <= setup.batching.max_defer_rounds + 1);
    }
}

TEST_CASE("the ODB simulation runs the configured policy, warm-up and window") {
  const auto samples = synthetic_samples(LognormalLengths{500, 0.5}, 800, 3, 16384);
  const auto shards = shard_epoch(samples.size(), 2, 1);
  BatchingConfig c;
  c.token_budget = 4096;
  c.window = 100;
  const auto balanced = simulate_odb(samples, shards, c);
  CHECK(balanced.failure.empty());
  CHECK(account_schedule(balanced.schedule, samples.size()).ok());
  // 400 samples per rank, 100 admitted per round: 4 rounds, and the all-DONE round.
  CHECK(balanced.rounds >= 5);
  CHECK(balanced.aligned_rank_steps == 2 * balanced.schedule.ranks[0].size());

  c.policy = Policy::reference;
  c.warmup = Warmup::linear;
  const auto reference = simulate_odb(samples, shards, c);
  CHECK(account_schedule(reference.schedule, samples.size()).ok());
  CHECK(reference.rounds > balanced.rounds);      // the 20-round ramp admits 1, 5, 10, ... first
  CHECK(reference.alignment_inflation() >= 1.0);  // reference splits, never defers here
}

TEST_CASE("compare_throughput refuses an empty epoch or an empty world") {
  auto setup = small_setup(1, 2);
  CHECK_THROWS_AS(compare_throughput({}, setup), std::invalid_argument);
  setup.cluster = {1, 0};
  const auto samples = synthetic_samples(LognormalLengths{}, 10, 1, 100);
  CHECK_THROWS_AS(compare_throughput(samples, setup), std::invalid_argument);
}

}  // namespace odbatch
