#pragma once
// The trainer's wait for a batch keeps a deadline while this rank's own stages are busy: when
// none of them finishes anything for pipeline.stall_timeout_ms (a stage that never returns, a
// read that never completes) and this rank is not in a round, whose wait its peers' deadlines
// bound, the epoch fails on every rank, naming what is in flight.
#include <chrono>
#include <optional>
#include <string>

#include "epoch_context.hpp"

namespace odbatch::actors {

// BatchQueue::pop(), watched: fails `epoch` (PipelineFailure::Cause::stalled) after
// `stall_timeout` without progress, whereupon the pop rethrows that failure. A zero timeout
// watches nothing.
std::optional<QueuedBatch> pop_watching_stalls(EpochContext& epoch,
                                               std::chrono::milliseconds stall_timeout);

// What the failure says: how long nothing moved, and where items wait.
std::string stall_description(const StatsSnapshot& stats, std::chrono::milliseconds still);

}  // namespace odbatch::actors
