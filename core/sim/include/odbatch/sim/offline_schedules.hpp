#pragma once
// Offline token-budget batching, the oracles of throughput comparisons: they know every sample's
// exact post-pipeline length before the epoch (a length cache) and may move samples between
// ranks. Groups respect the same budgets as the online plan (padded |g| * max L <= token_budget or
// packed sum L <= token_budget, the patch budget; a sample over a budget on its own is a
// singleton). Groups are shuffled and dealt round-robin: step s of rank r takes group s * W + r,
// so the last step may be IDLE on some ranks.
#include <cstdint>
#include <span>

#include "odbatch/core/config.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/sim/schedule.hpp"

namespace odbatch {

// GMT: the whole epoch sorted by length and cut into budget groups with the balanced policy's
// local grouping (as global_oracle counts them), then shuffled. Steps: ceil(groups / world).
Schedule global_token_budget_schedule(std::span<const SampleCost> samples,
                                      const BatchingConfig& config, std::uint32_t world,
                                      std::uint64_t seed);

// BMT: samples put in length buckets (`buckets_per_octave` buckets per doubling of the length:
// bucket floor(k * log2 L)), shuffled inside their bucket and cut greedily in that order: a sample
// joins the current group while the group stays within budget, else it opens the next group.
// All groups are then shuffled.
Schedule bucketed_token_budget_schedule(std::span<const SampleCost> samples,
                                        const BatchingConfig& config, std::uint32_t world,
                                        std::uint32_t buckets_per_octave, std::uint64_t seed);

}  // namespace odbatch
