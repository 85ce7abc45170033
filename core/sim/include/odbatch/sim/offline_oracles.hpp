#pragma once
// Offline yardsticks for the batching quality of the online round plan. They see whole shards (or
// the whole epoch) at once, which no online scheme can, and use the same budget semantics as the
// plan: padded |g| * max L <= token_budget, packed sum L <= token_budget, and a sample longer than
// the budget forms a singleton. Only token lengths count; the patch budget is not modelled.
#include <cstdint>
#include <span>
#include <vector>

#include "odbatch/core/config.hpp"

namespace odbatch {

// The budget groups cut from one set of lengths.
struct BudgetGrouping {
  std::uint64_t groups = 0;
  std::uint64_t sum_tokens = 0;     // sum of L over all grouped samples
  std::uint64_t padded_tokens = 0;  // sum over groups of |g| * max L

  // sum L / sum |g| * max L; 1 when nothing was grouped.
  double padding_efficiency() const;

  friend bool operator==(const BudgetGrouping&, const BudgetGrouping&) = default;
};

// Cuts budget groups from all the lengths at once with the balanced policy's local grouping
// (group_balanced): padded groups open with the longest remaining sample L and take the next
// floor(B / L) samples (at least 1); packed groups are filled best-fit decreasing. Zero lengths
// are skipped: screening rejects such samples, so they are never grouped.
BudgetGrouping budget_groups(std::span<const std::uint32_t> lengths, const BatchingConfig& config);

// LB: every rank sorts its whole shard and cuts budget groups. No scheme that keeps samples on
// their rank can take fewer steps than the largest per-rank group count.
struct PerShardOracle {
  std::uint64_t steps = 0;            // LB: the largest per-rank group count
  std::vector<BudgetGrouping> ranks;  // per shard
  BudgetGrouping total;               // summed over ranks
};
PerShardOracle per_shard_oracle(std::span<const std::vector<std::uint32_t>> shards,
                                const BatchingConfig& config);

// GMT: the whole epoch's samples sorted globally, budget groups cut and dealt to the W ranks.
struct GlobalOracle {
  std::uint64_t steps = 0;  // GMT: ceil(groups / W)
  BudgetGrouping grouping;  // over all groups
};
GlobalOracle global_oracle(std::span<const std::vector<std::uint32_t>> shards,
                           const BatchingConfig& config);

}  // namespace odbatch
