#pragma once
// One rank's side of the round protocol (docs/protocol.md, "One round"): exchange proposals in
// exactly one allgather, check every rank's header against our own, and compute the plan.
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/flight_recorder.hpp"

namespace odbatch {

// The round cannot be completed safely: the error names the round and, where known, the rank.
class RoundError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RoundCoordinator {
 public:
  // Every round, done or failed, goes to `recorder` when there is one (it must outlive this).
  // `settings` (the rank's batch-deciding settings) go with the first round of each epoch, so
  // that every rank fails there, naming the setting, when the ranks are configured apart.
  RoundCoordinator(Collective& collective, BatchingConfig config,
                   std::chrono::milliseconds round_deadline, FlightRecorder* recorder = nullptr,
                   std::vector<RunSetting> settings = {});

  // Runs round `proposal.round` of `proposal.epoch`: fills in the version, fingerprint, the
  // previous plan's digest and (first round of the epoch) the settings, exchanges, checks and
  // plans. Throws RoundError (and aborts the collective, so no peer waits for us) on any failure.
  RoundPlan run_round(Proposal proposal);

  // Rounds restart at 0 with digest 0 each epoch; the epoch's first round carries the settings.
  void start_epoch() {
    prev_digest_ = 0;
    settings_sent_ = false;
  }

 private:
  // run_round's work; fills in `record` as it goes.
  RoundPlan exchange_and_plan(const Proposal& proposal, RoundTrace& record);

  Collective& collective_;
  BatchingConfig config_;
  std::chrono::milliseconds round_deadline_;
  FlightRecorder* recorder_;
  std::uint64_t fingerprint_;
  std::uint64_t prev_digest_ = 0;
  std::vector<RunSetting> settings_;
  bool settings_sent_ = false;
};

}  // namespace odbatch
