#include "odbatch/sim/throughput_simulation.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/sim/odb_simulation.hpp"
#include "odbatch/sim/offline_oracles.hpp"
#include "odbatch/sim/offline_schedules.hpp"
#include "odbatch/sim/seeded_shuffle.hpp"
#include "odbatch/sim/standard_schedule.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kGmtDomain = 0x676d742d6f726463ULL;  // "gmt-ordc"
constexpr std::uint64_t kBmtDomain = 0x626d742d6f726463ULL;  // "bmt-ordc"

SchedulerResult measured(SchedulerKind kind, std::string name, const Schedule& schedule,
                         std::span<const SampleCost> samples, const ThroughputSetup& setup,
                         const BatchingConfig& batching) {
  SchedulerResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.metrics = measure_schedule(schedule, samples, setup.cost_model, setup.cluster, batching);
  r.accounting = account_schedule(schedule, samples.size());
  // Offline and fixed schedules form their groups without alignment: every group is a rank-step.
  if (r.metrics.groups > 0)
    r.alignment_inflation = static_cast<double>(r.metrics.steps * schedule.ranks.size()) /
                            static_cast<double>(r.metrics.groups);
  return r;
}

SchedulerResult online(Policy policy, Warmup warmup, std::span<const SampleCost> samples,
                       std::span<const std::vector<std::uint32_t>> shards,
                       const ThroughputSetup& setup, const BatchingConfig& batching) {
  BatchingConfig config = batching;
  config.policy = policy;
  config.warmup = warmup;
  const OdbSimulation sim = simulate_odb(samples, shards, config);
  const auto kind =
      policy == Policy::balanced ? SchedulerKind::odb_balanced : SchedulerKind::odb_reference;
  SchedulerResult r =
      measured(kind, "ODB " + std::string(to_string(policy)), sim.schedule, samples, setup, config);
  r.alignment_inflation = sim.alignment_inflation();
  r.deferral_histogram = sim.deferral_histogram;
  r.rounds = sim.rounds;
  r.audit_problems = sim.audit_problems;
  r.failure = sim.failure;
  return r;
}

std::vector<std::vector<std::uint32_t>> shard_lengths(
    std::span<const SampleCost> samples, std::span<const std::vector<std::uint32_t>> shards) {
  std::vector<std::vector<std::uint32_t>> lengths(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r)
    for (auto i : shards[r]) lengths[r].push_back(samples[i].tokens);
  return lengths;
}

}  // namespace

std::string_view to_string(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::standard:
      return "standard";
    case SchedulerKind::gmt:
      return "gmt";
    case SchedulerKind::bmt:
      return "bmt";
    case SchedulerKind::odb_reference:
      return "odb_reference";
    case SchedulerKind::odb_balanced:
      return "odb_balanced";
  }
  return "?";
}

std::vector<std::vector<std::uint32_t>> shard_epoch(std::uint64_t sample_count, std::uint32_t world,
                                                    std::uint64_t seed) {
  if (world == 0) throw std::invalid_argument("world size must be at least 1");
  std::vector<std::uint32_t> order(sample_count);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(seed);
  seeded_shuffle(std::span<std::uint32_t>(order), rng);
  std::vector<std::vector<std::uint32_t>> shards(world);
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto first = sample_count * r / world, last = sample_count * (r + 1) / world;
    shards[r].assign(order.begin() + static_cast<std::ptrdiff_t>(first),
                     order.begin() + static_cast<std::ptrdiff_t>(last));
  }
  return shards;
}

BatchingConfig simulation_batching(const BatchingConfig& config,
                                   std::span<const SampleCost> samples) {
  BatchingConfig c = config;
  for (const auto& s : samples) c.max_seq_len = std::max(c.max_seq_len, s.tokens);
  c.zero_labels = ZeroLabelPolicy::keep;
  c.over_budget = OverBudgetPolicy::singleton;
  return c;
}

ThroughputComparison compare_throughput(std::span<const SampleCost> samples,
                                        const ThroughputSetup& setup) {
  if (samples.empty()) throw std::invalid_argument("the epoch has no samples");
  const std::uint32_t world = setup.cluster.world();
  if (world == 0) throw std::invalid_argument("world size must be at least 1");
  ThroughputComparison out;
  out.batching = simulation_batching(setup.batching, samples);
  const auto shards = shard_epoch(samples.size(), world, setup.seed);
  const auto lengths = shard_lengths(samples, shards);
  out.lb_steps = per_shard_oracle(lengths, out.batching).steps;
  out.gmt_steps = global_oracle(lengths, out.batching).steps;

  for (const auto batch_size : setup.standard_batch_sizes) {
    auto r = measured(SchedulerKind::standard, "Standard bs=" + std::to_string(batch_size),
                      standard_schedule(shards, batch_size), samples, setup, out.batching);
    r.batch_size = batch_size;
    out.results.push_back(std::move(r));
  }
  out.results.push_back(
      measured(SchedulerKind::gmt, "GMT",
               global_token_budget_schedule(samples, out.batching, world,
                                            stable_hash({kGmtDomain, setup.seed})),
               samples, setup, out.batching));
  out.results.push_back(measured(
      SchedulerKind::bmt, "BMT",
      bucketed_token_budget_schedule(samples, out.batching, world, setup.bmt_buckets_per_octave,
                                     stable_hash({kBmtDomain, setup.seed})),
      samples, setup, out.batching));
  out.results.push_back(
      online(Policy::reference, setup.reference_warmup, samples, shards, setup, out.batching));
  out.results.push_back(
      online(Policy::balanced, setup.balanced_warmup, samples, shards, setup, out.batching));

  if (!setup.standard_batch_sizes.empty() && out.results.front().metrics.samples_per_second > 0) {
    const double baseline = out.results.front().metrics.samples_per_second;
    for (auto& r : out.results) r.speedup = r.metrics.samples_per_second / baseline;
  }
  return out;
}

}  // namespace odbatch
