#include <doctest/doctest.h>

#include "odbatch/core/grouping.hpp"
#include "test_support.hpp"

using namespace odbatch;
using odbatch::test::budget_config;
using odbatch::test::proposal_of;
using odbatch::test::window_of;
using Members = std::vector<std::uint32_t>;

namespace {

std::vector<Members> members_of(const std::vector<LocalGroup>& groups) {
  std::vector<Members> out;
  for (const auto& g : groups) out.push_back(g.members);
  return out;
}

}  // namespace

TEST_CASE("reference grouping: the longest sample is a singleton and capacity lags a group") {
  // Lengths 10, 40, 30, 20 with budget 60. Walking longest first: 40 closes at once (cap 0) and
  // sets cap 1; 30 closes alone and sets cap 2; 20 and 10 fill a group of 2.
  const auto grouping = group_reference(window_of({10, 40, 30, 20}), budget_config(60));
  CHECK(members_of(grouping.groups) == std::vector<Members>{{0, 3}, {2}, {1}});
  CHECK(grouping.deferred.empty());
}

TEST_CASE("reference grouping orders equal lengths like a stable ascending sort walked backwards") {
  const auto grouping = group_reference(window_of({20, 20, 20, 20}), budget_config(40));
  // Walk: sample 3 (cap 0 -> singleton, cap 2), then 2 and 1, then 0.
  CHECK(members_of(grouping.groups) == std::vector<Members>{{0}, {1, 2}, {3}});
}

TEST_CASE("reference grouping clamps to `window` groups, deferring the longest") {
  auto config = budget_config(60);
  config.window = 2;
  const auto grouping = group_reference(window_of({10, 40, 30, 20}), config);
  CHECK(members_of(grouping.groups) == std::vector<Members>{{0, 3}, {2}});
  CHECK(grouping.deferred == Members{1});
}

TEST_CASE("reference grouping closes a group before the patch limit is crossed") {
  auto config = budget_config(1000);
  config.patch_budget = 10;
  auto window = window_of({100, 90, 80, 70});
  window[0].patches = 4;
  window[1].patches = 4;
  window[2].patches = 4;
  window[3].patches = 4;
  // Walk: 100 singleton (cap becomes min(10, 10/4=2) = 2); 90 + 80 (8 patches) close at cap 2;
  // 70 alone.
  const auto grouping = group_reference(window, config);
  CHECK(members_of(grouping.groups) == std::vector<Members>{{3}, {2, 1}, {0}});
}

TEST_CASE("reference target is min(max G, min positive budget, min positive samples), at least 1") {
  const auto config = budget_config(60);
  std::vector<Proposal> proposals{proposal_of(RankState::active, window_of({10, 40, 30, 20})),
                                  proposal_of(RankState::active, window_of({10, 10, 10, 10, 10}))};
  std::vector<ReferenceGrouping> groupings{group_reference(proposals[0].samples, config),
                                           group_reference(proposals[1].samples, config)};
  // G = 3 and 2 (rank 1: a singleton, then the other four); budgets 4 and 5; samples 4 and 5.
  REQUIRE(groupings[1].groups.size() == 2);
  CHECK(reference_step_count(proposals, groupings) == 3);
  SUBCASE("the smallest positive budget caps the target") {
    proposals[1].entered = 1;
    CHECK(reference_step_count(proposals, groupings) == 1);
  }
  SUBCASE("the smallest sample count caps the target") {
    proposals[1] = proposal_of(RankState::active, window_of({10, 10}));
    groupings[1] = group_reference(proposals[1].samples, config);
    CHECK(reference_step_count(proposals, groupings) == 2);
  }
  SUBCASE("a zero budget is ignored") {
    proposals[0].entered = 0;
    proposals[1].entered = 0;
    CHECK(reference_step_count(proposals, groupings) == 3);
  }
  SUBCASE("ranks without groups do not count") {
    proposals[1] = proposal_of(RankState::done, {});
    groupings[1] = group_reference(proposals[1].samples, config);
    CHECK(reference_step_count(proposals, groupings) == 3);
    groupings[0] = group_reference({}, config);
    CHECK(reference_step_count(proposals, groupings) == 0);
  }
}

TEST_CASE("reference split peels the longest sample off the last multi-sample group") {
  const auto config = budget_config(1000);
  const auto window = window_of({1, 2, 3, 4, 5});
  std::vector<LocalGroup> groups(2);
  groups[0].members = {0, 1};
  groups[1].members = {2, 3, 4};
  SUBCASE("one extra step") {
    const auto fitted = fit_reference(groups, 3, window, config);
    CHECK(members_of(fitted.groups) == std::vector<Members>{{0, 1}, {2, 3}, {4}});
  }
  SUBCASE("more extra steps move on to earlier groups") {
    const auto fitted = fit_reference(groups, 5, window, config);
    CHECK(members_of(fitted.groups) == std::vector<Members>{{0}, {1}, {2}, {3}, {4}});
  }
  SUBCASE("peeled groups carry their own costs") {
    const auto fitted = fit_reference(groups, 4, window, config);
    CHECK(members_of(fitted.groups) == std::vector<Members>{{0, 1}, {2}, {3}, {4}});
    CHECK(fitted.groups[1].max_tokens == 3);
    CHECK(fitted.groups[1].sum_tokens == 3);
  }
}

TEST_CASE("reference drop keeps the groups with most samples, ties to the lower index") {
  const auto config = budget_config(1000);
  const auto window = window_of({1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::vector<LocalGroup> groups(4);
  groups[0].members = {0};
  groups[1].members = {1, 2, 3};
  groups[2].members = {4, 5};
  groups[3].members = {6, 7, 8};
  const auto fitted = fit_reference(groups, 2, window, config);
  CHECK(members_of(fitted.groups) == std::vector<Members>{{1, 2, 3}, {6, 7, 8}});
  CHECK(fitted.deferred == Members{0, 4, 5});
  const auto three = fit_reference(groups, 3, window, config);
  CHECK(members_of(three.groups) == std::vector<Members>{{1, 2, 3}, {4, 5}, {6, 7, 8}});
}
