#pragma once
// Per-rank grouping and alignment rules of both policies. plan_round composes them; they are
// exposed so each rule can be tested on its own.
#include <cstdint>
#include <span>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/proposal.hpp"

namespace odbatch {

// A group formed from one rank's window, in formation order. Members are window indices.
struct LocalGroup {
  std::vector<std::uint32_t> members;
  std::uint32_t max_tokens = 0;
  std::uint64_t sum_tokens = 0;
  std::uint64_t sum_patches = 0;
  bool closed = false;  // closed by the token or patch budget (not a trailing partial group)
  bool good = false;    // closed and at least hold_pct full
  bool forced = false;  // holds a sample whose age reached max_defer_rounds
  bool over_budget = false;

  // padded: |g| * max L; packed: sum L. Steps are ordered and groups kept by this cost.
  std::uint64_t cost(BudgetMode mode) const {
    return mode == BudgetMode::padded ? std::uint64_t{max_tokens} * members.size() : sum_tokens;
  }
};

// `balanced` local grouping: longest-first, each group sized from its own longest sample
// (padded), or best-fit decreasing while the sum fits (packed).
std::vector<LocalGroup> group_balanced(std::span<const ProposedSample> window,
                                       const BatchingConfig& config);

// `balanced` step count T over all ranks' groups (PROTOCOL.md, plan step 2).
std::uint32_t balanced_step_count(std::span<const Proposal> proposals,
                                  std::span<const std::vector<LocalGroup>> groups);

// `balanced` fit of one rank's groups to T: keep forced, good, then costliest groups (the rest
// are returned in `deferred`), or split the largest groups in halves.
struct FittedGroups {
  std::vector<LocalGroup> groups;       // at most T, in formation order
  std::vector<std::uint32_t> deferred;  // window indices
};
FittedGroups fit_balanced(std::vector<LocalGroup> groups, std::uint32_t steps,
                          std::span<const ProposedSample> window, const BatchingConfig& config);

// `reference` (public ODB v5.1) local grouping: lagged capacity, ascending output, clamped to
// `window` groups (the clamped longest groups are returned in `deferred`).
struct ReferenceGrouping {
  std::vector<LocalGroup> groups;  // ascending length; members ascending
  std::vector<std::uint32_t> deferred;
};
ReferenceGrouping group_reference(std::span<const ProposedSample> window,
                                  const BatchingConfig& config);

// `reference` target: max(1, min(max G, min positive budget, min positive sample count)) over
// ranks with groups; 0 when no rank has a group.
std::uint32_t reference_step_count(std::span<const Proposal> proposals,
                                   std::span<const ReferenceGrouping> groupings);

// `reference` fit: peel the longest sample off the last multi-sample group, or keep the groups
// with most samples (ties: lower index) in their original order.
FittedGroups fit_reference(std::vector<LocalGroup> groups, std::uint32_t steps,
                           std::span<const ProposedSample> window, const BatchingConfig& config);

}  // namespace odbatch
