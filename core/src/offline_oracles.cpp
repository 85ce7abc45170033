#include "odbatch/core/offline_oracles.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>

namespace odbatch {
namespace {

// Accounts one formed group: `members` lengths, the first of which is the group's longest.
void add_group(BudgetGrouping& out, std::uint32_t longest, std::uint64_t members,
               std::uint64_t sum_tokens) {
  ++out.groups;
  out.sum_tokens += sum_tokens;
  out.padded_tokens += std::uint64_t{longest} * members;
}

BudgetGrouping group_padded(std::span<const std::uint32_t> descending, std::uint32_t budget) {
  BudgetGrouping out;
  std::size_t i = 0;
  while (i < descending.size()) {
    const std::uint32_t longest = descending[i];
    const std::size_t capacity = std::max<std::size_t>(1, budget / longest);
    const std::size_t end = std::min(descending.size(), i + capacity);
    std::uint64_t sum = 0;
    for (std::size_t j = i; j < end; ++j) sum += descending[j];
    add_group(out, longest, end - i, sum);
    i = end;
  }
  return out;
}

BudgetGrouping group_packed(std::span<const std::uint32_t> descending, std::uint32_t budget) {
  BudgetGrouping out;
  std::multiset<std::uint32_t, std::greater<>> remaining(descending.begin(), descending.end());
  while (!remaining.empty()) {
    const std::uint32_t longest = *remaining.begin();
    remaining.erase(remaining.begin());
    std::uint64_t members = 1, sum = longest;
    // An over-budget opener stays a singleton; otherwise take the longest sample that fits.
    while (sum < budget && !remaining.empty()) {
      const auto fit = remaining.lower_bound(static_cast<std::uint32_t>(budget - sum));
      if (fit == remaining.end()) break;
      sum += *fit;
      ++members;
      remaining.erase(fit);
    }
    add_group(out, longest, members, sum);
  }
  return out;
}

BudgetGrouping& operator+=(BudgetGrouping& a, const BudgetGrouping& b) {
  a.groups += b.groups;
  a.sum_tokens += b.sum_tokens;
  a.padded_tokens += b.padded_tokens;
  return a;
}

}  // namespace

double BudgetGrouping::padding_efficiency() const {
  return padded_tokens == 0 ? 1.0
                            : static_cast<double>(sum_tokens) / static_cast<double>(padded_tokens);
}

BudgetGrouping budget_groups(std::span<const std::uint32_t> lengths, const BatchingConfig& config) {
  std::vector<std::uint32_t> descending;
  descending.reserve(lengths.size());
  std::copy_if(lengths.begin(), lengths.end(), std::back_inserter(descending),
               [](std::uint32_t length) { return length > 0; });
  std::sort(descending.begin(), descending.end(), std::greater<>());
  return config.budget_mode == BudgetMode::padded ? group_padded(descending, config.token_budget)
                                                  : group_packed(descending, config.token_budget);
}

PerShardOracle per_shard_oracle(std::span<const std::vector<std::uint32_t>> shards,
                                const BatchingConfig& config) {
  PerShardOracle out;
  out.ranks.reserve(shards.size());
  for (const auto& shard : shards) {
    out.ranks.push_back(budget_groups(shard, config));
    out.steps = std::max(out.steps, out.ranks.back().groups);
    out.total += out.ranks.back();
  }
  return out;
}

GlobalOracle global_oracle(std::span<const std::vector<std::uint32_t>> shards,
                           const BatchingConfig& config) {
  GlobalOracle out;
  if (shards.empty()) return out;
  std::vector<std::uint32_t> epoch;
  for (const auto& shard : shards) epoch.insert(epoch.end(), shard.begin(), shard.end());
  out.grouping = budget_groups(epoch, config);
  const std::uint64_t world = shards.size();
  out.steps = (out.grouping.groups + world - 1) / world;
  return out;
}

}  // namespace odbatch
