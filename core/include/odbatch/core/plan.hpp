#pragma once
// The round plan function F of PROTOCOL.md: identical on every rank, pure and deterministic.
#include <cstdint>
#include <span>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/proposal.hpp"

namespace odbatch {

// One step of one rank: a group of window samples, or IDLE (count == 0).
struct StepGroup {
  std::uint32_t first = 0;  // offset into RankPlan::members
  std::uint32_t count = 0;
  std::uint32_t max_tokens = 0;
  std::uint64_t sum_tokens = 0;
  std::uint64_t sum_labels = 0;
  std::uint64_t sum_patches = 0;
  bool over_budget = false;  // a singleton that exceeds a budget on its own

  bool idle() const { return count == 0; }
  friend bool operator==(const StepGroup&, const StepGroup&) = default;
};

struct RankPlan {
  std::vector<StepGroup> steps;         // exactly T entries
  std::vector<std::uint32_t> members;   // window indices of every step's group, step after step
  std::vector<std::uint32_t> deferred;  // window indices that stay (ascending)
  std::vector<double> loss_scale;       // per step; derived, not part of the digest

  std::span<const std::uint32_t> group(std::size_t step) const {
    const auto& s = steps[step];
    return {members.data() + s.first, s.count};
  }
  friend bool operator==(const RankPlan&, const RankPlan&) = default;
};

// Global per-step totals over all ranks.
struct StepTotals {
  std::uint64_t samples = 0;
  std::uint64_t tokens = 0;
  std::uint64_t labels = 0;
  friend bool operator==(const StepTotals&, const StepTotals&) = default;
};

struct RoundPlan {
  std::uint64_t epoch = 0;
  std::uint64_t round = 0;
  std::uint32_t steps = 0;  // T
  bool epoch_over = false;  // every rank reported DONE
  std::vector<RankPlan> ranks;
  std::vector<StepTotals> totals;  // per step
  std::uint64_t digest = 0;        // over integer fields only

  friend bool operator==(const RoundPlan&, const RoundPlan&) = default;
};

// F(proposals, config, seed, epoch, round). The seed is config.seed. Proposals must have passed
// check_proposals; rank r's proposal is proposals[r].
RoundPlan plan_round(std::span<const Proposal> proposals, const BatchingConfig& config,
                     std::uint64_t epoch, std::uint64_t round);

// The permutation of 0..steps-1 applied to every rank's cost-ordered steps: a function of
// (seed, epoch, round) only, so it is the same on all ranks.
std::vector<std::uint32_t> step_permutation(std::uint64_t seed, std::uint64_t epoch,
                                            std::uint64_t round, std::uint32_t steps);

}  // namespace odbatch
