#include "stall_watch.hpp"

#include <algorithm>

namespace odbatch::actors {

std::optional<QueuedBatch> pop_watching_stalls(EpochContext& epoch,
                                               std::chrono::milliseconds stall_timeout) {
  if (stall_timeout.count() == 0) return epoch.queue().pop();
  using Clock = std::chrono::steady_clock;
  // Often enough that a stall is declared within a quarter of its timeout of the deadline.
  const auto check_every = std::clamp<Clock::duration>(
      stall_timeout / 4, std::chrono::milliseconds(1), std::chrono::seconds(5));
  auto done = epoch.stats().work_done();
  auto still_since = Clock::now();
  while (true) {
    bool timed_out = false;
    auto queued = epoch.queue().pop_until(Clock::now() + check_every, &timed_out);
    if (!timed_out) return queued;
    const auto now = Clock::now();
    const auto now_done = epoch.stats().work_done();
    if (now_done != done || epoch.in_round()) {
      done = now_done;
      still_since = now;
    } else if (now - still_since >= stall_timeout) {
      epoch.fail(stall_description(
                     epoch.stats().snapshot(),
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - still_since)),
                 PipelineFailure::Cause::stalled);
    }
  }
}

std::string stall_description(const StatsSnapshot& stats, std::chrono::milliseconds still) {
  std::string text = "stalled: no stage of this rank finished anything for " +
                     std::to_string(still.count()) +
                     " ms while the trainer waited for a batch and this rank was not in a round "
                     "(pipeline.stall_timeout_ms); items waiting:";
  bool any = false;
  for (const auto& [name, queue] : stats.named_queues()) {
    if (queue->depth == 0) continue;
    text += std::string(any ? "," : "") + " " + std::string(name) + " " +
            std::to_string(queue->depth) + " of " + std::to_string(queue->capacity);
    any = true;
  }
  if (!any) text += " none";
  text += "; items done:";
  for (const auto& [name, stage] : stats.named_stages())
    text += " " + std::string(name) + " " + std::to_string(stage->items);
  return text;
}

}  // namespace odbatch::actors
