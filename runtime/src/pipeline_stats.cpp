#include "odbatch/runtime/pipeline_stats.hpp"

#include <ctime>

namespace odbatch {
namespace {

StageSnapshot snapshot_of(const StageCounters& c) {
  return {c.items.load(std::memory_order_relaxed),
          static_cast<double>(c.cpu_ns.load(std::memory_order_relaxed)) * 1e-9,
          static_cast<double>(c.blocked_ns.load(std::memory_order_relaxed)) * 1e-9};
}

}  // namespace

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

StatsSnapshot PipelineStats::snapshot() const {
  StatsSnapshot s;
  s.records_read = records_read.load();
  s.samples_emitted = samples_emitted.load();
  s.batches = batches.load();
  s.idle_batches = idle_batches.load();
  s.tokens = tokens.load();
  s.padded_tokens = padded_tokens.load();
  s.labels = labels.load();
  s.seconds_to_first_batch = static_cast<double>(first_batch_ns.load()) * 1e-9;
  s.trainer_wait_seconds = static_cast<double>(trainer_wait_ns.load()) * 1e-9;
  {
    std::lock_guard lock(mutex_);
    s.rejected_by_reason = rejected_;
  }
  for (const auto& [reason, count] : s.rejected_by_reason) s.samples_rejected += count;
  s.reader = snapshot_of(reader);
  s.tokenizer = snapshot_of(tokenizer);
  s.image_decoder = snapshot_of(image_decoder);
  s.joiner = snapshot_of(joiner);
  s.packer = snapshot_of(packer);
  s.aligner = snapshot_of(aligner);
  s.coordinator = snapshot_of(coordinator);
  s.emitter = snapshot_of(emitter);
  return s;
}

}  // namespace odbatch
