#include <doctest/doctest.h>

#include "odbatch/core/grouping.hpp"
#include "test_support.hpp"

using namespace odbatch;
using odbatch::test::budget_config;
using odbatch::test::proposal_of;
using odbatch::test::window_of;
using Members = std::vector<std::uint32_t>;

TEST_CASE("balanced padded grouping sizes each group from its own longest sample") {
  const auto window = window_of({30, 50, 20, 20, 10});
  const auto groups = group_balanced(window, budget_config(100));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{1, 0});  // capacity 100/50 = 2
  CHECK(groups[0].closed);
  CHECK_FALSE(groups[0].good);  // 80 of 100 padded tokens used: below hold_pct 98
  CHECK(groups[0].cost(BudgetMode::padded) == 100);
  CHECK(groups[1].members == Members{2, 3, 4});  // capacity 5, ran out of samples
  CHECK_FALSE(groups[1].closed);
  CHECK_FALSE(groups[1].good);
}

TEST_CASE("balanced grouping marks full groups good and breaks ties in window order") {
  const auto groups = group_balanced(window_of({25, 50, 25, 50, 25, 25}), budget_config(100));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{1, 3});
  CHECK(groups[0].good);
  CHECK(groups[1].members == Members{0, 2, 4, 5});
  CHECK(groups[1].good);
}

TEST_CASE("balanced grouping closes a group at the patch budget") {
  auto window = window_of({100, 90, 80});
  window[0].patches = 6;
  window[1].patches = 5;
  window[2].patches = 3;
  auto config = budget_config(1000);
  config.patch_budget = 10;
  const auto groups = group_balanced(window, config);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{0});
  CHECK(groups[0].closed);  // closed by the patch budget
  CHECK(groups[1].members == Members{1, 2});
  CHECK(groups[1].sum_patches == 8);
  CHECK_FALSE(groups[1].closed);
}

TEST_CASE("an over-budget sample forms a flagged singleton") {
  const auto groups = group_balanced(window_of({40, 150}), budget_config(100));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{1});
  CHECK(groups[0].over_budget);
  CHECK(groups[0].good);
  CHECK_FALSE(groups[1].over_budget);
}

TEST_CASE("a group holding a sample of age max_defer_rounds is forced") {
  auto window = window_of({50, 50, 10});
  window[2].age = 4;
  const auto groups = group_balanced(window, budget_config(100));
  REQUIRE(groups.size() == 2);
  CHECK_FALSE(groups[0].forced);
  CHECK(groups[1].forced);
}

TEST_CASE("balanced packed grouping fills best-fit decreasing") {
  auto config = budget_config(100);
  config.budget_mode = BudgetMode::packed;
  const auto groups = group_balanced(window_of({60, 50, 30, 20, 10}), config);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{0, 2, 4});  // 60 + 30 + 10 = 100
  CHECK(groups[0].closed);
  CHECK(groups[0].good);
  CHECK(groups[1].members == Members{1, 3});  // 50 + 20, nothing left
  CHECK_FALSE(groups[1].closed);
  CHECK(groups[1].cost(BudgetMode::packed) == 70);
}

TEST_CASE("balanced packed grouping skips samples that break the patch budget") {
  auto config = budget_config(100);
  config.budget_mode = BudgetMode::packed;
  config.patch_budget = 10;
  auto window = window_of({50, 30, 20});
  window[0].patches = 5;
  window[1].patches = 6;  // does not fit next to sample 0
  window[2].patches = 5;
  const auto groups = group_balanced(window, config);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].members == Members{0, 2});
  CHECK(groups[1].members == Members{1});
}

TEST_CASE("balanced step count follows the ACTIVE, forced and draining rules") {
  const auto config = budget_config(100);
  // Rank 0: 3 good groups; rank 1: 5 good groups.
  const auto full3 = window_of({50, 50, 50, 50, 50, 50});
  const auto full5 = window_of({50, 50, 50, 50, 50, 50, 50, 50, 50, 50});
  std::vector<Proposal> proposals{proposal_of(RankState::active, full3),
                                  proposal_of(RankState::active, full5)};
  std::vector<std::vector<LocalGroup>> groups{group_balanced(full3, config),
                                              group_balanced(full5, config)};
  CHECK(balanced_step_count(proposals, groups) == 3);

  SUBCASE("a DRAINING rank's good groups do not lower T") {
    proposals[0].state = RankState::draining;
    CHECK(balanced_step_count(proposals, groups) == 5);
  }
  SUBCASE("forced groups raise T") {
    auto aged = full5;
    for (auto& s : aged) s.age = config.max_defer_rounds;
    proposals[1] = proposal_of(RankState::draining, aged);
    groups[1] = group_balanced(aged, config);
    CHECK(balanced_step_count(proposals, groups) == 5);
  }
  SUBCASE("an ACTIVE rank without good groups still yields one step") {
    const auto partial = window_of({10});
    proposals[0] = proposal_of(RankState::active, partial);
    groups[0] = group_balanced(partial, config);
    CHECK(balanced_step_count(proposals, groups) == 1);
  }
  SUBCASE("no ACTIVE rank drains everything") {
    proposals[0].state = RankState::draining;
    proposals[1].state = RankState::draining;
    CHECK(balanced_step_count(proposals, groups) == 5);
  }
  SUBCASE("no sample anywhere means no step") {
    proposals = {proposal_of(RankState::done, {}), proposal_of(RankState::active, {})};
    groups = {{}, {}};
    CHECK(balanced_step_count(proposals, groups) == 0);
  }
}

TEST_CASE("balanced fit keeps forced, then good, then costliest groups") {
  const auto config = budget_config(100);
  auto window = window_of({50, 50, 40, 40, 30, 10});
  window[5].age = config.max_defer_rounds;
  auto groups = group_balanced(window, config);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].members == Members{0, 1});
  CHECK(groups[0].good);
  CHECK(groups[1].members == Members{2, 3});  // capacity 100/40 = 2, 80 of 80 padded: good
  CHECK(groups[1].good);
  CHECK(groups[2].members == Members{4, 5});  // forced by sample 5
  CHECK(groups[2].forced);

  SUBCASE("T = 1 keeps only the forced group") {
    const auto fitted = fit_balanced(groups, 1, window, config);
    REQUIRE(fitted.groups.size() == 1);
    CHECK(fitted.groups[0].members == Members{4, 5});
    CHECK(fitted.deferred == Members{0, 1, 2, 3});
  }
  SUBCASE("T = 2 adds the costlier good group") {
    const auto fitted = fit_balanced(groups, 2, window, config);
    REQUIRE(fitted.groups.size() == 2);
    CHECK(fitted.groups[0].members == Members{0, 1});  // formation order is kept
    CHECK(fitted.groups[1].members == Members{4, 5});
    CHECK(fitted.deferred == Members{2, 3});
  }
}

TEST_CASE("balanced fit splits the largest group in halves, the first half taking the extra") {
  const auto config = budget_config(100);
  const auto window = window_of({20, 19, 18, 17, 16});
  auto groups = group_balanced(window, config);
  REQUIRE(groups.size() == 1);
  const auto fitted = fit_balanced(groups, 3, window, config);
  REQUIRE(fitted.groups.size() == 3);
  // 5 -> 3 + 2, then 3 -> 2 + 1.
  CHECK(fitted.groups[0].members == Members{0, 1});
  CHECK(fitted.groups[1].members == Members{2});
  CHECK(fitted.groups[2].members == Members{3, 4});
  CHECK(fitted.groups[0].max_tokens == 20);
  CHECK(fitted.groups[2].max_tokens == 17);
  CHECK(fitted.deferred.empty());

  SUBCASE("ties go to the earliest group and splitting stops at singletons") {
    const auto two = window_of({50, 50, 50, 50});
    const auto g = group_balanced(two, config);
    REQUIRE(g.size() == 2);
    const auto f = fit_balanced(g, 3, two, config);
    REQUIRE(f.groups.size() == 3);
    CHECK(f.groups[0].members == Members{0});
    CHECK(f.groups[1].members == Members{1});
    CHECK(f.groups[2].members == Members{2, 3});
    const auto all = fit_balanced(g, 10, two, config);
    CHECK(all.groups.size() == 4);
  }
}
