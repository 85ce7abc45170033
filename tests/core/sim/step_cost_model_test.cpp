#include "odbatch/sim/step_cost_model.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

namespace odbatch {
namespace {

// Round numbers, so every expected time below is checked by hand.
StepCostModel simple_model() {
  StepCostModel m;
  m.name = "simple";
  m.fixed_seconds = 1.0;
  m.seconds_per_token = 0.01;
  m.seconds_per_attention = 0.0001;
  m.seconds_per_patch = 0.001;
  m.gradient_bytes = 8e9;
  m.intra_node_bus_bytes_per_second = 100e9;
  m.inter_node_bytes_per_second = 10e9;
  m.unsharded_optimizer_seconds = 0.8;
  return m;
}

}  // namespace

TEST_CASE("a rank's step time: padded counts |g| * max L, packed counts sum L") {
  const auto m = simple_model();
  const std::vector<SampleCost> group{{0, 10, 5, 0}, {1, 30, 5, 100}, {2, 20, 5, 0}};
  const RankWork w = group_work(group);
  CHECK(w.rows == 3);
  CHECK(w.max_tokens == 30);
  CHECK(w.sum_tokens == 60);
  CHECK(w.sum_squared_tokens == 100 + 900 + 400);
  CHECK(w.patches == 100);
  // Padded: 1 + 0.01 * 3 * 30 + 0.0001 * 3 * 900 + 0.001 * 100 = 1 + 0.9 + 0.27 + 0.1.
  CHECK(rank_seconds(m, w, BudgetMode::padded) == doctest::Approx(2.27));
  // Packed: 1 + 0.01 * 60 + 0.0001 * 1400 + 0.001 * 100 = 1 + 0.6 + 0.14 + 0.1.
  CHECK(rank_seconds(m, w, BudgetMode::packed) == doctest::Approx(1.84));
  // IDLE: the two-token dummy, 1 + 0.02 + 0.0004.
  CHECK(rank_seconds(m, idle_work(), BudgetMode::padded) == doctest::Approx(1.0204));
}

TEST_CASE("gradient all-reduce: intra-node ring, then across nodes") {
  const auto m = simple_model();
  CHECK(allreduce_seconds(m, {1, 1}) == 0.0);
  // 2 * 7/8 * 8e9 / 100e9 = 0.14.
  CHECK(allreduce_seconds(m, {1, 8}) == doctest::Approx(0.14));
  // Plus 2 * 1/2 * 8e9 / 10e9 = 0.8 between two nodes.
  CHECK(allreduce_seconds(m, {2, 8}) == doctest::Approx(0.94));
  // One rank per node: only the network.
  CHECK(allreduce_seconds(m, {4, 1}) == doctest::Approx(2 * 0.75 * 0.8));
  // ZeRO shards the update over all 16 ranks.
  CHECK(optimizer_seconds(m, {2, 8}) == doctest::Approx(0.05));
}

TEST_CASE("presets derive their coefficients from the model and platform") {
  const auto m = cost_model_preset("2b");
  REQUIRE(m);
  const double flops = 0.40 * 148e12;
  CHECK(m->seconds_per_token == doctest::Approx(6 * 1.7e9 / flops));
  CHECK(m->seconds_per_attention == doctest::Approx(6.0 * 28 * 2048 / flops));
  CHECK(m->seconds_per_patch == doctest::Approx(6 * 0.4e9 / flops));
  CHECK(m->fixed_seconds == doctest::Approx((28 + 24) * 100 * 20e-6 + 0.05));
  CHECK(m->gradient_bytes == doctest::Approx(2 * 2.1e9));
  CHECK(m->unsharded_optimizer_seconds == doctest::Approx(32 * 2.1e9 / 4e12));
  const auto big = cost_model_preset("8b");
  REQUIRE(big);
  CHECK(big->seconds_per_token > m->seconds_per_token);
  CHECK_FALSE(cost_model_preset("70b"));
  CHECK(cost_model_preset_names() == std::vector<std::string>{"2b", "8b"});
  CHECK_THROWS_AS(preset_model("70b"), std::invalid_argument);
}

TEST_CASE("calibration recovers t0 and a from two steps the model itself predicts") {
  StepCostModel truth = simple_model();
  truth.seconds_per_patch = 0;
  const ClusterShape cluster{1, 8};
  // Every sample 100 tokens: a step of n samples lasts
  // 1 + n * (0.01 * 100 + 0.0001 * 100^2) + 0.14 + 0.1 = 1.24 + 2n.
  const std::vector<SampleCost> samples(4, SampleCost{0, 100, 50, 0});
  StepCostModel guess = truth;
  guess.fixed_seconds = 5;
  guess.seconds_per_token = 1;
  const auto fitted = calibrate(guess, {1, 3.24}, {10, 21.24}, samples, cluster);
  CHECK(fitted.fixed_seconds == doctest::Approx(1.0));
  CHECK(fitted.seconds_per_token == doctest::Approx(0.01));
  CHECK(fitted.seconds_per_attention == truth.seconds_per_attention);
  CHECK(fitted.name == "simple calibrated");

  CHECK_THROWS_AS(calibrate(guess, {2, 3}, {2, 4}, samples, cluster), std::invalid_argument);
  // Steps getting shorter with more samples leave no positive time per token.
  CHECK_THROWS_AS(calibrate(guess, {1, 9}, {10, 3}, samples, cluster), std::invalid_argument);
  // A step faster than communication and the optimizer leaves a negative t0.
  CHECK_THROWS_AS(calibrate(guess, {1, 2.1}, {10, 20.1}, samples, cluster), std::invalid_argument);
  CHECK_THROWS_AS(calibrate(guess, {1, 3}, {10, 21}, {}, cluster), std::invalid_argument);
}

}  // namespace odbatch
