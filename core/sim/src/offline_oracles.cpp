#include "odbatch/sim/offline_oracles.hpp"

#include <algorithm>

#include "odbatch/core/grouping.hpp"

namespace odbatch {
namespace {

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
  // The same local grouping the balanced policy applies to a window, over the whole input.
  std::vector<ProposedSample> samples;
  samples.reserve(lengths.size());
  for (auto length : lengths)
    if (length > 0) samples.push_back({length, 0, 0, 0});
  BatchingConfig tokens_only = config;
  tokens_only.patch_budget = 0;
  BudgetGrouping out;
  for (const auto& g : group_balanced(samples, tokens_only)) {
    ++out.groups;
    out.sum_tokens += g.sum_tokens;
    out.padded_tokens += g.cost(BudgetMode::padded);
  }
  return out;
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
