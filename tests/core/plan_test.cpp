#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "odbatch/core/plan.hpp"
#include "test_support.hpp"

using namespace odbatch;
using odbatch::test::budget_config;
using odbatch::test::proposal_of;
using odbatch::test::window_of;

TEST_CASE("the step permutation is a permutation that depends only on seed, epoch and round") {
  const auto p = step_permutation(7, 1, 3, 50);
  std::vector<std::uint32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint32_t> identity(50);
  std::iota(identity.begin(), identity.end(), 0u);
  CHECK(sorted == identity);
  CHECK(p == step_permutation(7, 1, 3, 50));
  CHECK(p != step_permutation(7, 1, 4, 50));
  CHECK(p != step_permutation(8, 1, 3, 50));
  CHECK(p != step_permutation(7, 2, 3, 50));
  CHECK(step_permutation(7, 1, 3, 0).empty());
  CHECK(step_permutation(7, 1, 3, 1) == std::vector<std::uint32_t>{0});
}

TEST_CASE("a round where every rank is DONE plans no step and ends the epoch") {
  const std::vector<Proposal> proposals{proposal_of(RankState::done, {}),
                                        proposal_of(RankState::done, {})};
  const auto plan = plan_round(proposals, budget_config(100), 0, 5);
  CHECK(plan.steps == 0);
  CHECK(plan.epoch_over);
  CHECK(plan.totals.empty());
  REQUIRE(plan.ranks.size() == 2);
  CHECK(plan.ranks[0].steps.empty());
}

TEST_CASE("a draining round emits everything, with IDLE steps on the rank with fewer groups") {
  auto config = budget_config(100);
  config.loss_scaling = LossScaling::tokens;
  // Rank 0: groups {50,50} and {40,40}; rank 1: one group {30,30,30}.
  const std::vector<Proposal> proposals{
      proposal_of(RankState::draining, window_of({50, 40, 50, 40})),
      proposal_of(RankState::draining, window_of({30, 30, 30}))};
  const auto plan = plan_round(proposals, config, 2, 9);
  CHECK(plan.steps == 2);
  CHECK_FALSE(plan.epoch_over);
  REQUIRE(plan.ranks.size() == 2);
  const auto& r0 = plan.ranks[0];
  const auto& r1 = plan.ranks[1];
  CHECK(r0.deferred.empty());
  CHECK(r1.deferred.empty());
  // Rank 1 splits its single group in two: {30,30} and {30}; no IDLE needed.
  CHECK(
      std::none_of(r1.steps.begin(), r1.steps.end(), [](const StepGroup& s) { return s.idle(); }));
  double sum_at_step0 = 0;
  for (std::uint32_t step = 0; step < plan.steps; ++step) {
    const auto& t = plan.totals[step];
    CHECK(t.samples == r0.steps[step].count + r1.steps[step].count);
    CHECK(t.tokens == r0.steps[step].sum_tokens + r1.steps[step].sum_tokens);
    if (step == 0) sum_at_step0 = r0.loss_scale[0] + r1.loss_scale[0];
  }
  CHECK(sum_at_step0 == doctest::Approx(2.0));
  // Costliest-first pairing: the step holding rank 0's {50,50} also holds rank 1's {30,30}.
  for (std::uint32_t step = 0; step < plan.steps; ++step)
    if (r0.steps[step].max_tokens == 50) CHECK(r1.steps[step].count == 2);
}

TEST_CASE("a rank with nothing to emit gets IDLE steps with loss scale 0") {
  const std::vector<Proposal> proposals{
      proposal_of(RankState::draining, window_of({50, 50, 50, 50})),
      proposal_of(RankState::done, {})};
  const auto plan = plan_round(proposals, budget_config(100), 0, 0);
  CHECK(plan.steps == 2);
  for (std::uint32_t step = 0; step < plan.steps; ++step) {
    CHECK(plan.ranks[1].steps[step].idle());
    CHECK(plan.ranks[1].loss_scale[step] == 0.0);
    CHECK(plan.ranks[0].loss_scale[step] == doctest::Approx(2.0));
  }
}

TEST_CASE("while a rank is ACTIVE, groups beyond T are deferred") {
  // Rank 0 (ACTIVE) has one good group; rank 1 has three good groups.
  const std::vector<Proposal> proposals{
      proposal_of(RankState::active, window_of({50, 50, 10})),
      proposal_of(RankState::active, window_of({50, 50, 40, 40, 25, 25, 25, 25}))};
  const auto plan = plan_round(proposals, budget_config(100), 0, 0);
  CHECK(plan.steps == 1);
  CHECK(plan.ranks[0].deferred == std::vector<std::uint32_t>{2});
  // Rank 1 keeps its costliest good group {50,50}.
  CHECK(plan.ranks[1].group(0).size() == 2);
  CHECK(plan.ranks[1].steps[0].max_tokens == 50);
  CHECK(plan.ranks[1].deferred == std::vector<std::uint32_t>{2, 3, 4, 5, 6, 7});
}

TEST_CASE("the plan digest is deterministic and covers the groups") {
  const std::vector<Proposal> a{proposal_of(RankState::draining, window_of({50, 40, 50, 40})),
                                proposal_of(RankState::draining, window_of({30, 30, 30}))};
  const auto config = budget_config(100);
  const auto plan = plan_round(a, config, 0, 1);
  CHECK(plan == plan_round(a, config, 0, 1));
  CHECK(plan.digest == plan_round(a, config, 0, 1).digest);
  CHECK(plan.digest != plan_round(a, config, 0, 2).digest);
  auto b = a;
  b[1].samples[0].tokens = 20;  // changes which samples pair up
  CHECK(plan.digest != plan_round(b, config, 0, 1).digest);
}

TEST_CASE("the reference policy runs target steps and pairs ascending groups") {
  auto config = budget_config(60);
  config.policy = Policy::reference;
  const std::vector<Proposal> proposals{proposal_of(RankState::active, window_of({10, 40, 30, 20})),
                                        proposal_of(RankState::active, window_of({10, 10}))};
  const auto plan = plan_round(proposals, config, 0, 0);
  CHECK(plan.steps == 2);
  // Rank 0 keeps its two largest groups by sample count: {0,3} and (tie, lower index) {2}.
  CHECK(plan.ranks[0].deferred == std::vector<std::uint32_t>{1});
  CHECK(plan.ranks[1].deferred.empty());
}
