#pragma once
// The throughput comparison of `odbatch simulate`: one epoch of samples sharded over the ranks,
// batched by fixed-batch Standard training, the offline token-budget oracles GMT and BMT, and
// online dynamic batching under the `reference` and `balanced` policies, each schedule checked for
// coverage and alignment and timed with the step cost model.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/sim/schedule.hpp"
#include "odbatch/sim/schedule_metrics.hpp"
#include "odbatch/sim/step_cost_model.hpp"

namespace odbatch {

struct ThroughputSetup {
  BatchingConfig batching;  // budget, budget mode, window, deferral limit and seed of the plan
  Warmup balanced_warmup = Warmup::short_ramp;  // odbatch's default
  Warmup reference_warmup = Warmup::linear;     // the public package's 20-round ramp
  ClusterShape cluster;
  StepCostModel cost_model;
  std::vector<std::uint32_t> standard_batch_sizes{1, 2, 4, 8};
  std::uint32_t bmt_buckets_per_octave = 4;
  std::uint64_t seed = 1;  // the epoch's shuffle before sharding, and GMT's and BMT's shuffles
};

enum class SchedulerKind : std::uint8_t { standard, gmt, bmt, odb_reference, odb_balanced };
std::string_view to_string(SchedulerKind kind);

struct SchedulerResult {
  SchedulerKind kind = SchedulerKind::standard;
  std::string name;              // "Standard bs=4", "GMT", "BMT", "ODB reference", "ODB balanced"
  std::uint32_t batch_size = 0;  // Standard only
  ScheduleMetrics metrics;
  ScheduleAccounting accounting;
  double speedup = 0.0;  // samples per second over the first Standard row's
  double alignment_inflation = 1.0;
  std::vector<std::uint64_t> deferral_histogram;  // ODB only
  std::uint64_t rounds = 0;                       // ODB only
  std::uint64_t audit_problems = 0;               // ODB only: the epoch audit of its ledgers
  std::string failure;                            // ODB only
};

struct ThroughputComparison {
  BatchingConfig batching;               // as simulated (see simulation_batching)
  std::uint64_t lb_steps = 0;            // per_shard_oracle on the same shards
  std::uint64_t gmt_steps = 0;           // global_oracle
  std::vector<SchedulerResult> results;  // Standard rows (in setup order), GMT, BMT, ODB ref, bal
};

// The epoch's indices shuffled with `seed` and split contiguously: shard sizes differ by at most 1.
std::vector<std::vector<std::uint32_t>> shard_epoch(std::uint64_t sample_count, std::uint32_t world,
                                                    std::uint64_t seed);

// The batching config with screening set to accept every sample as it is, so every scheme batches
// the same samples: max_seq_len at least the longest sample, zero-label samples kept, samples over
// the budget emitted as flagged singletons.
BatchingConfig simulation_batching(const BatchingConfig& config,
                                   std::span<const SampleCost> samples);

// Sample ids are ignored: samples are referred to by their index. Throws std::invalid_argument
// for an empty epoch, a world of 0 ranks or a Standard batch size of 0.
ThroughputComparison compare_throughput(std::span<const SampleCost> samples,
                                        const ThroughputSetup& setup);

}  // namespace odbatch
