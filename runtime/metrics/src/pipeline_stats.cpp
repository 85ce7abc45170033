#include "odbatch/metrics/pipeline_stats.hpp"

#include <algorithm>
#include <ctime>

namespace odbatch {
namespace {

StageSnapshot snapshot_of(const StageCounters& c) {
  return {c.items.load(std::memory_order_relaxed),
          static_cast<double>(c.cpu_ns.load(std::memory_order_relaxed)) * 1e-9,
          static_cast<double>(c.blocked_ns.load(std::memory_order_relaxed)) * 1e-9};
}

QueueSnapshot snapshot_of(const QueueGauge& q) {
  const std::uint64_t capacity = q.capacity.load(std::memory_order_relaxed);
  const std::int64_t depth = q.depth.load(std::memory_order_relaxed);
  return {std::min(static_cast<std::uint64_t>(std::max<std::int64_t>(depth, 0)), capacity),
          capacity};
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::vector<std::pair<std::string_view, const StageSnapshot*>> StatsSnapshot::named_stages() const {
  std::vector<std::pair<std::string_view, const StageSnapshot*>> stages{{"reader", &reader}};
  for (const auto& user : user_stages)
    if (user.record_stage) stages.emplace_back(user.name, &user.work);
  stages.insert(
      stages.end(),
      {{"tokenizer", &tokenizer}, {"image_decoder", &image_decoder}, {"joiner", &joiner}});
  for (const auto& user : user_stages)
    if (!user.record_stage) stages.emplace_back(user.name, &user.work);
  stages.insert(stages.end(), {{"packer", &packer},
                               {"aligner", &aligner},
                               {"coordinator", &coordinator},
                               {"emitter", &emitter}});
  return stages;
}

std::vector<std::pair<std::string_view, const QueueSnapshot*>> StatsSnapshot::named_queues() const {
  std::vector<std::pair<std::string_view, const QueueSnapshot*>> queues{
      {"reader_in_flight", &reader_in_flight}};
  for (const auto& user : user_stages) queues.emplace_back(user.name, &user.queue);
  queues.emplace_back("batch_queue", &batch_queue);
  return queues;
}

UserStageCounters& PipelineStats::add_user_stage(std::string name, bool record_stage) {
  auto& added = user_stages_.emplace_back();
  added.name = std::move(name);
  added.record_stage = record_stage;
  return added;
}

void PipelineStats::mark_started() {
  std::int64_t unset = 0;
  started_ns_.compare_exchange_strong(unset, std::max<std::int64_t>(steady_ns(), 1));
}

std::uint64_t PipelineStats::work_done() const {
  std::uint64_t done = records_read.load() + batches.load() + idle_batches.load();
  for (const auto* stage :
       {&reader, &tokenizer, &image_decoder, &joiner, &packer, &aligner, &coordinator, &emitter})
    done += stage->items.load();
  for (const auto& user : user_stages_) done += user.work.items.load();
  return done;
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
  s.image_buffers_reused = image_buffers_reused.load();
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
  s.reader_in_flight = snapshot_of(reader_in_flight);
  s.batch_queue = snapshot_of(batch_queue);
  for (const auto& user : user_stages_)
    s.user_stages.push_back(
        {user.name, user.record_stage, snapshot_of(user.work), snapshot_of(user.queue)});
  s.round_latency = round_latency.snapshot();
  if (const auto started = started_ns_.load(); started != 0)
    s.wall_seconds = static_cast<double>(steady_ns() - started) * 1e-9;
  return s;
}

}  // namespace odbatch
