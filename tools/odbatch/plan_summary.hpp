#pragma once
// A compact text view of planned rounds, for reading at a terminal: one line per round with each
// rank's state, window, IDLE steps and deferred samples, then the epoch's outcome next to the
// offline yardsticks.
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch::cli {

std::string summarize_rounds(std::span<const LockstepRound> rounds, const BatchingConfig& config);

// Steps, padding efficiency and IDLE share of an epoch run against LB and GMT, and the audit.
std::string summarize_epoch(std::span<const std::vector<SampleCost>> shards,
                            const LockstepResult& result, const AuditReport& audit,
                            const BatchingConfig& config);

}  // namespace odbatch::cli
