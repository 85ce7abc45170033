#pragma once
// Online dynamic batching over whole shards for throughput comparisons: the lockstep run of the
// real round plan (run_lockstep, plan_round, warm-up and window of the config), turned into a
// schedule, with what only the online scheme has: rounds, deferrals and alignment.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/sim/schedule.hpp"

namespace odbatch {

struct OdbSimulation {
  Schedule schedule;
  std::vector<std::uint64_t> deferral_histogram;  // [d]: samples emitted after d deferrals
  std::uint64_t rounds = 0;
  std::uint64_t aligned_rank_steps = 0;  // sum over rounds of T * W
  // Sum over rounds and ranks of the groups formed before alignment.
  std::uint64_t local_groups = 0;
  std::uint64_t audit_problems = 0;
  std::string failure;  // the simulator's, when the epoch did not end cleanly

  // T * W / sum of group counts: rank-steps the alignment spends per group the ranks formed.
  double alignment_inflation() const;
};

// `shards[r]` holds rank r's sample indices in shard order; the schedule's steps refer to the
// same indices.
OdbSimulation simulate_odb(std::span<const SampleCost> samples,
                           std::span<const std::vector<std::uint32_t>> shards,
                           const BatchingConfig& config);

}  // namespace odbatch
