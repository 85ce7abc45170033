#include <doctest/doctest.h>

#include <thread>

#include "odbatch/core/lockstep.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/dist/round_coordinator.hpp"
#include "round_test_support.hpp"

using namespace odbatch;
using namespace std::chrono_literals;

namespace {

using test::proposal_of;
using test::small_config;

}  // namespace

TEST_CASE("ranks on threads compute the plan the lockstep simulator computes") {
  const auto config = small_config();
  const std::vector<std::vector<ProposedSample>> windows{
      {{50, 10, 0, 0}, {50, 10, 0, 0}, {20, 5, 0, 0}}, {{30, 3, 0, 0}}, {}};
  auto group = InprocGroup::create(3);
  std::vector<RoundPlan> plans(3);
  std::vector<std::thread> ranks;
  for (std::uint32_t r = 0; r < 3; ++r)
    ranks.emplace_back([&, r] {
      auto member = group->member(r);
      RoundCoordinator coordinator(*member, config, 5s);
      const auto state = windows[r].empty() ? RankState::done : RankState::draining;
      plans[r] = coordinator.run_round(proposal_of(0, state, windows[r]));
    });
  for (auto& t : ranks) t.join();
  CHECK(plans[0] == plans[1]);
  CHECK(plans[0] == plans[2]);
  std::vector<Proposal> direct;
  for (const auto& w : windows)
    direct.push_back(proposal_of(0, w.empty() ? RankState::done : RankState::draining, w));
  CHECK(plans[0] == plan_round(direct, config, 0, 0));
}

TEST_CASE("a rank with another configuration makes every rank fail naming the divergence") {
  auto group = InprocGroup::create(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (std::uint32_t r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      auto member = group->member(r);
      auto config = small_config();
      if (r == 1) config.token_budget = 200;
      RoundCoordinator coordinator(*member, config, 5s);
      try {
        coordinator.run_round(proposal_of(0, RankState::draining, {{10, 1, 0, 0}}));
      } catch (const RoundError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ranks) t.join();
  for (const auto& e : errors) {
    CHECK(e.find("round 0") != std::string::npos);
    CHECK(e.find("fingerprint") != std::string::npos);
  }
}

TEST_CASE("a rank that never arrives fails the round at its deadline") {
  auto group = InprocGroup::create(2);
  auto member = group->member(0);
  RoundCoordinator coordinator(*member, small_config(), 30ms);
  CHECK_THROWS_WITH_AS(coordinator.run_round(proposal_of(0, RankState::draining, {{10, 1, 0, 0}})),
                       doctest::Contains("waiting for rank 1"), RoundError);
}
