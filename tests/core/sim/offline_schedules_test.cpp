#include "odbatch/sim/offline_schedules.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "odbatch/sim/offline_oracles.hpp"

namespace odbatch {
namespace {

std::vector<SampleCost> samples_of(const std::vector<std::uint32_t>& tokens) {
  std::vector<SampleCost> out;
  for (std::uint32_t i = 0; i < tokens.size(); ++i) out.push_back({i, tokens[i], 1, 0});
  return out;
}

BatchingConfig budget(std::uint32_t token_budget, BudgetMode mode = BudgetMode::padded) {
  BatchingConfig c;
  c.token_budget = token_budget;
  c.budget_mode = mode;
  return c;
}

// Every non-IDLE step's samples, sorted, in sorted order: the groups whatever the shuffle.
std::vector<std::vector<std::uint32_t>> groups_of(const Schedule& s) {
  std::vector<std::vector<std::uint32_t>> groups;
  for (const auto& rank : s.ranks)
    for (auto step : rank)
      if (!step.empty()) {
        std::sort(step.begin(), step.end());
        groups.push_back(step);
      }
  std::sort(groups.begin(), groups.end());
  return groups;
}

using Groups = std::vector<std::vector<std::uint32_t>>;

}  // namespace

TEST_CASE("GMT sorts the epoch, cuts budget groups and deals them to the ranks") {
  // 2 ranks, 6 samples, budget 10, lengths by index: 3 5 1 4 5 3.
  // Longest first: {5,5} = samples 1,4 (10 padded tokens), {4,3} = 3,0 (8), {3,1} = 5,2 (6):
  // three groups over two ranks: 2 steps, one of them IDLE on one rank.
  const auto samples = samples_of({3, 5, 1, 4, 5, 3});
  const auto s = global_token_budget_schedule(samples, budget(10), 2, 7);
  CHECK(groups_of(s) == Groups{{0, 3}, {1, 4}, {2, 5}});
  REQUIRE(s.ranks.size() == 2);
  CHECK(s.ranks[0].size() == 2);
  CHECK(s.ranks[1].size() == 2);
  CHECK(s.ranks[1][1].empty());  // group 3 of 3 goes to rank 0, step 1
  CHECK(account_schedule(s, 6).ok());
  // As many steps as the oracle counts.
  CHECK(global_oracle(std::vector<std::vector<std::uint32_t>>{{3, 5, 1}, {4, 5, 3}}, budget(10))
            .steps == 2);
  // The same seed deals the same schedule.
  CHECK(global_token_budget_schedule(samples, budget(10), 2, 7).ranks == s.ranks);

  // Packed: {5,5}, then best fit {4,3,3}, then {1}.
  const auto packed = global_token_budget_schedule(samples, budget(10, BudgetMode::packed), 2, 7);
  CHECK(groups_of(packed) == Groups{{0, 3, 5}, {1, 4}, {2}});
}

TEST_CASE("BMT cuts budget groups inside length buckets") {
  // One bucket per octave: bucket floor(log2 L). Lengths by index: 3 5 1 4 5 3 give buckets
  // 0: {2 (L=1)}, 1: {0, 5 (L=3)}, 2: {1, 3, 4 (L=5, 4, 5)}. Budget 10, padded: {0,5} fits
  // (2 * 3 = 6); in bucket 2 any two samples fit (2 * 5 = 10) and a third does not (15), so it
  // forms 2 groups: four groups in all, two steps on two ranks, none IDLE.
  const auto samples = samples_of({3, 5, 1, 4, 5, 3});
  const auto s = bucketed_token_budget_schedule(samples, budget(10), 2, 1, 3);
  const auto groups = groups_of(s);
  REQUIRE(groups.size() == 4);
  CHECK(std::count(groups.begin(), groups.end(), std::vector<std::uint32_t>{2}) == 1);
  CHECK(std::count(groups.begin(), groups.end(), std::vector<std::uint32_t>{0, 5}) == 1);
  std::size_t in_bucket_two = 0;
  for (const auto& g : groups)
    if (std::all_of(g.begin(), g.end(), [](auto i) { return i == 1 || i == 3 || i == 4; }))
      in_bucket_two += g.size();
  CHECK(in_bucket_two == 3);
  CHECK(s.ranks[0].size() == 2);
  CHECK(s.ranks[1].size() == 2);
  CHECK(account_schedule(s, 6).ok());
  CHECK(bucketed_token_budget_schedule(samples, budget(10), 2, 1, 3).ranks == s.ranks);

  // Four buckets per octave split 4 (bucket 8) from 5 (bucket 9): {4} and {5,5}.
  const auto fine = groups_of(bucketed_token_budget_schedule(samples, budget(10), 2, 4, 3));
  CHECK(std::count(fine.begin(), fine.end(), std::vector<std::uint32_t>{1, 4}) == 1);
  CHECK(std::count(fine.begin(), fine.end(), std::vector<std::uint32_t>{3}) == 1);

  // A sample over the budget is a singleton; packed groups fill while the sum fits.
  const auto over = samples_of({12, 9, 9});
  CHECK(groups_of(bucketed_token_budget_schedule(over, budget(10), 1, 1, 3)) ==
        Groups{{0}, {1}, {2}});
  // Packed, four samples of 3 under budget 10: whichever three come first fill a group (9).
  const auto packed = groups_of(bucketed_token_budget_schedule(
      samples_of({3, 3, 3, 3}), budget(10, BudgetMode::packed), 1, 1, 3));
  REQUIRE(packed.size() == 2);
  CHECK(packed[0].size() + packed[1].size() == 4);
  CHECK(std::max(packed[0].size(), packed[1].size()) == 3);
}

}  // namespace odbatch
