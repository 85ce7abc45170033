#pragma once
// Live counters of a pipeline, updated by its stages and read by anyone (progress bars,
// summaries, benchmarks, the metrics endpoint). Stage times are thread CPU time, so they measure
// work, not waiting; blocked times are wall time spent waiting on a full downstream.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "odbatch/metrics/metrics_latency_histogram.hpp"

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

// A bounded edge of the graph: items in it now and the most it may hold. Producer and consumer
// each adjust the depth after their side of a move, so it may dip below zero for a moment; the
// snapshot clamps it.
struct QueueGauge {
  std::atomic<std::int64_t> depth{0};
  std::atomic<std::uint64_t> capacity{0};
};

struct QueueSnapshot {
  std::uint64_t depth = 0;
  std::uint64_t capacity = 0;
};

// A user stage ([[stage]]) as the stats know it: its name, where it runs (record stages before
// tokenization, sample stages before the packer), its work and the queue of its pool.
struct UserStageSnapshot {
  std::string name;
  bool record_stage = true;
  StageSnapshot work;
  QueueSnapshot queue;
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
  std::uint64_t image_buffers_reused = 0;  // images decoded into a buffer a released one gave back
  // The first epoch's, from start_epoch to its first batch; 0 before it (counters are cumulative).
  double seconds_to_first_batch = 0.0;
  double trainer_wait_seconds = 0.0;  // time next_batch() blocked on an empty queue
  // Wall time since the pipeline's first start_epoch (0 before it): what the rates divide by.
  double wall_seconds = 0.0;
  StageSnapshot reader, tokenizer, image_decoder, joiner, packer, aligner, coordinator, emitter;
  std::vector<UserStageSnapshot> user_stages;  // in the order each kind runs them
  // Samples the reader has read that the joiner has not released yet (the reader's credits:
  // pipeline.reader_capacity + lookahead), and batches waiting for the trainer (prefetch).
  QueueSnapshot reader_in_flight, batch_queue;
  // The coordinator's completed rounds: readiness, proposal exchange and plan.
  LatencySnapshot round_latency;

  double padding_efficiency() const {
    return padded_tokens ? static_cast<double>(tokens) / static_cast<double>(padded_tokens) : 1.0;
  }
  double samples_per_second() const {
    return wall_seconds > 0 ? static_cast<double>(samples_emitted) / wall_seconds : 0.0;
  }
  double tokens_per_second() const {
    return wall_seconds > 0 ? static_cast<double>(tokens) / wall_seconds : 0.0;
  }

  // The stages and the queues in pipeline order, with the names reports give them: record stages
  // after the reader, sample stages after the joiner (which hands them complete samples); a user
  // stage's queue is named after it.
  std::vector<std::pair<std::string_view, const StageSnapshot*>> named_stages() const;
  std::vector<std::pair<std::string_view, const QueueSnapshot*>> named_queues() const;
};

struct UserStageCounters {
  std::string name;
  bool record_stage = true;
  StageCounters work;
  QueueGauge queue;  // items waiting for one of the stage's workers
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
  std::atomic<std::uint64_t> image_buffers_reused{0};
  std::atomic<std::uint64_t> first_batch_ns{0};
  std::atomic<std::uint64_t> trainer_wait_ns{0};
  QueueGauge reader_in_flight, batch_queue;
  LatencyHistogram round_latency;

  // The wall clock of the rates starts at the first call; later calls change nothing.
  void mark_started();

  // Adds a user stage's counters, before the pipeline runs; they live as long as the stats.
  UserStageCounters& add_user_stage(std::string name, bool record_stage);
  UserStageCounters& user_stage(std::size_t index) { return user_stages_[index]; }

  void count_rejection(const std::string& reason) {
    std::lock_guard lock(mutex_);
    ++rejected_[reason];
  }

  StatsSnapshot snapshot() const;

  // Items every stage has finished, records read and batches made, in one number that grows
  // whenever any part of the pipeline moves: what a watchdog compares to see progress.
  std::uint64_t work_done() const;

 private:
  std::atomic<std::int64_t> started_ns_{0};  // steady clock, since its epoch; 0: not started
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> rejected_;
  std::deque<UserStageCounters> user_stages_;  // a deque: counters never move
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
