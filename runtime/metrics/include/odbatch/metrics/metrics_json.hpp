#pragma once
// A pipeline's counters as one JSON object, for trainers' logs and `odbatch run --stats-json`:
// every counter of the snapshot, the rates over its wall time, the queue depths and the round
// latency (docs/metrics.md lists the fields).
#include <string>

#include "odbatch/metrics/pipeline_stats.hpp"

namespace odbatch {

std::string stats_json(const StatsSnapshot& stats);

}  // namespace odbatch
