#pragma once
// Live counters of a pipeline, updated by its stages and read by anyone (progress bars,
// summaries, benchmarks). Stage times are thread CPU time, so they measure work, not waiting.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace odbatch {

struct StageCounters {
  std::atomic<std::uint64_t> items{0};
  std::atomic<std::uint64_t> cpu_ns{0};      // thread CPU time spent on the items
  std::atomic<std::uint64_t> blocked_ns{0};  // wall time spent waiting on a full downstream

  void add_work(std::uint64_t count, std::uint64_t cpu) {
    items.fetch_add(count, std::memory_order_relaxed);
    cpu_ns.fetch_add(cpu, std::memory_order_relaxed);
  }
};

struct StageSnapshot {
  std::uint64_t items = 0;
  double cpu_seconds = 0.0;
  double blocked_seconds = 0.0;
};

struct StatsSnapshot {
  std::uint64_t records_read = 0;
  std::uint64_t samples_emitted = 0;
  std::uint64_t samples_rejected = 0;
  std::map<std::string, std::uint64_t> rejected_by_reason;
  std::uint64_t batches = 0;
  std::uint64_t idle_batches = 0;
  std::uint64_t tokens = 0;         // real tokens emitted
  std::uint64_t padded_tokens = 0;  // padded layout: rows * longest row, summed over batches
  std::uint64_t labels = 0;
  // The first epoch's, from start_epoch to its first batch; 0 before it (counters are cumulative).
  double seconds_to_first_batch = 0.0;
  double trainer_wait_seconds = 0.0;  // time next_batch() blocked on an empty queue
  StageSnapshot reader, tokenizer, image_decoder, joiner, packer, aligner, coordinator, emitter;

  double padding_efficiency() const {
    return padded_tokens ? static_cast<double>(tokens) / static_cast<double>(padded_tokens) : 1.0;
  }
};

class PipelineStats {
 public:
  StageCounters reader, tokenizer, image_decoder, joiner, packer, aligner, coordinator, emitter;
  std::atomic<std::uint64_t> records_read{0};
  std::atomic<std::uint64_t> samples_emitted{0};
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> idle_batches{0};
  std::atomic<std::uint64_t> tokens{0};
  std::atomic<std::uint64_t> padded_tokens{0};
  std::atomic<std::uint64_t> labels{0};
  std::atomic<std::uint64_t> first_batch_ns{0};
  std::atomic<std::uint64_t> trainer_wait_ns{0};

  void count_rejection(const std::string& reason) {
    std::lock_guard lock(mutex_);
    ++rejected_[reason];
  }

  StatsSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> rejected_;
};

// CPU time of the calling thread, in nanoseconds.
std::uint64_t thread_cpu_ns();

// Adds the calling thread's CPU time between construction and destruction to a stage.
class StageTimer {
 public:
  explicit StageTimer(StageCounters& stage, std::uint64_t items = 1)
      : stage_(stage), items_(items), start_(thread_cpu_ns()) {}
  ~StageTimer() { stage_.add_work(items_, thread_cpu_ns() - start_); }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  StageCounters& stage_;
  std::uint64_t items_;
  std::uint64_t start_;
};

}  // namespace odbatch
