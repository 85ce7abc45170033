#include "odbatch/sim/offline_oracles.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace odbatch {
namespace {

BatchingConfig budget_config(std::uint32_t budget, BudgetMode mode) {
  BatchingConfig c;
  c.token_budget = budget;
  c.budget_mode = mode;
  return c;
}

using Lengths = std::vector<std::uint32_t>;

}  // namespace

TEST_CASE("oracle padded groups take floor(B / L) samples from their own longest") {
  const auto c = budget_config(10, BudgetMode::padded);
  // {5,5} (10), {4,3} (8), {3,1} (6).
  const Lengths lengths{3, 5, 1, 4, 5, 3};
  const auto g = budget_groups(lengths, c);
  CHECK(g == BudgetGrouping{3, 21, 24});
  CHECK(g.padding_efficiency() == doctest::Approx(21.0 / 24.0));

  // {6,3} (12), then the group opened by 3 holds 4: {3,3,3} (9).
  const Lengths shrinking{6, 3, 3, 3, 3};
  CHECK(budget_groups(shrinking, budget_config(12, BudgetMode::padded)) ==
        BudgetGrouping{2, 18, 21});
}

TEST_CASE("oracle packed groups fill by best fit decreasing") {
  const auto c = budget_config(10, BudgetMode::packed);
  // {5,5}, {4,3,3}, {1}: padded costs 10 + 12 + 1.
  const Lengths lengths{3, 5, 1, 4, 5, 3};
  CHECK(budget_groups(lengths, c) == BudgetGrouping{3, 21, 23});

  // After 7 the room is 3: best fit skips both 4s and takes 3; then {4,4}.
  const Lengths skip{7, 4, 3, 4};
  CHECK(budget_groups(skip, c) == BudgetGrouping{2, 18, 22});
}

TEST_CASE("oracle over-budget samples are singletons in both modes") {
  const Lengths lengths{12, 9, 1};
  // Padded: {12}, {9} (capacity 1), {1}.
  CHECK(budget_groups(lengths, budget_config(10, BudgetMode::padded)) == BudgetGrouping{3, 22, 22});
  // Packed: {12} already exceeds the budget and stays alone; {9,1}.
  CHECK(budget_groups(lengths, budget_config(10, BudgetMode::packed)) == BudgetGrouping{2, 22, 30});
}

TEST_CASE("oracle empty input and zero lengths form no group") {
  for (auto mode : {BudgetMode::padded, BudgetMode::packed}) {
    const auto c = budget_config(10, mode);
    const auto none = budget_groups(Lengths{}, c);
    CHECK(none == BudgetGrouping{});
    CHECK(none.padding_efficiency() == 1.0);
    CHECK(budget_groups(Lengths{0, 0, 4, 0}, c) == BudgetGrouping{1, 4, 4});
  }
}

TEST_CASE("oracle LB is the largest per-shard group count") {
  const auto c = budget_config(10, BudgetMode::padded);
  const std::vector<Lengths> shards{{5, 5, 4, 3, 3, 1}, {}, {9, 9, 9, 9}};
  const auto lb = per_shard_oracle(shards, c);
  CHECK(lb.steps == 4);
  REQUIRE(lb.ranks.size() == 3);
  CHECK(lb.ranks[0] == BudgetGrouping{3, 21, 24});
  CHECK(lb.ranks[1] == BudgetGrouping{});
  CHECK(lb.ranks[2] == BudgetGrouping{4, 36, 36});
  CHECK(lb.total == BudgetGrouping{7, 57, 60});

  CHECK(per_shard_oracle(std::vector<Lengths>{}, c).steps == 0);
  CHECK(per_shard_oracle(std::vector<Lengths>{{}, {}}, c).steps == 0);
}

TEST_CASE("oracle GMT deals the globally sorted groups to the ranks") {
  const auto c = budget_config(10, BudgetMode::padded);
  // {9} x 4, {5,5}, {4,3}, {3,1}: 7 groups over 3 ranks.
  const std::vector<Lengths> shards{{5, 5, 4, 3, 3, 1}, {}, {9, 9, 9, 9}};
  const auto gmt = global_oracle(shards, c);
  CHECK(gmt.steps == 3);
  CHECK(gmt.grouping == BudgetGrouping{7, 57, 60});

  // Merging shards lets two half-full groups share one: LB 1 per rank, GMT one group in total.
  const std::vector<Lengths> halves{{5}, {5}};
  CHECK(per_shard_oracle(halves, c).total == BudgetGrouping{2, 10, 10});
  const auto merged = global_oracle(halves, c);
  CHECK(merged.steps == 1);
  CHECK(merged.grouping == BudgetGrouping{1, 10, 10});

  CHECK(global_oracle(std::vector<Lengths>{}, c).steps == 0);
  CHECK(global_oracle(std::vector<Lengths>{{}, {}}, c).steps == 0);
}

TEST_CASE("oracle GMT gives each over-budget sample its own group") {
  const auto c = budget_config(10, BudgetMode::packed);
  const std::vector<Lengths> shards{{20, 1}, {30, 2}};
  // {30}, {20}, {2,1}: 3 groups over 2 ranks.
  const auto gmt = global_oracle(shards, c);
  CHECK(gmt.steps == 2);
  CHECK(gmt.grouping == BudgetGrouping{3, 53, 54});
}

}  // namespace odbatch
