#pragma once
// Which sample sits at each window index, round by round, in a recorded lockstep run. Plans name
// window indices only (ids stay local to a rank); the report shows ids too.
#include <vector>

#include "odbatch/core/lockstep.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch::cli {

// Per recorded round, per rank: the ids of the window samples in window order.
using WindowIds = std::vector<std::vector<std::vector<SampleId>>>;

// Replays every rank's window as RankWindow keeps it: the samples the previous plan deferred (in
// its order), then the round's newly admitted samples in shard order (rejected samples never
// enter). Throws std::logic_error if the replay disagrees with the recorded proposals.
WindowIds replay_window_ids(const LockstepScenario& scenario, const LockstepResult& result);

}  // namespace odbatch::cli
