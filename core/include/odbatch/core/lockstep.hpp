#pragma once
// A lockstep multi-rank run of whole epochs without threads: every rank admits samples from its
// shard, proposes, receives all proposals through an exchange (e.g. an encode/decode round trip),
// computes the plan on its own, checks that its plan agrees with every other rank's, and emits.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"

namespace odbatch {

struct LockstepScenario {
  BatchingConfig config;
  std::uint64_t epoch = 0;
  std::vector<std::vector<SampleCost>> shards;  // per rank, in shard order; may hold bad samples
};

// Delivers the sent proposals to `receiver` and returns what it received. Identity by default;
// tests pass a wire encode/decode round trip.
using ProposalExchange =
    std::function<std::vector<Proposal>(std::uint32_t receiver, std::span<const Proposal> sent)>;

struct LockstepOptions {
  ProposalExchange exchange;     // empty: identity
  bool every_rank_plans = true;  // every rank computes F itself and plans are compared
  bool record_rounds = false;    // keep every round's proposals and plan
  std::uint64_t max_rounds = 0;  // 0: the guarantee-4 bound (ramp rounds + samples + 1)
};

struct LockstepRound {
  std::vector<Proposal> proposals;
  RoundPlan plan;
};

struct LockstepResult {
  std::vector<RankLedger> ledgers;
  std::vector<SampleId> expected_ids;  // every id of every shard
  std::vector<LockstepRound> rounds;   // when recorded
  std::uint64_t rounds_run = 0;
  bool finished = false;  // reached epoch_over
  std::string failure;    // divergence, disagreeing plans or the round bound; empty when fine
};

LockstepResult run_lockstep(const LockstepScenario& scenario, const LockstepOptions& options = {});

// Upper bound on an epoch's rounds (PROTOCOL.md, guarantee 4), including the final all-DONE round.
std::uint64_t round_bound(const BatchingConfig& config, std::uint64_t total_samples);

}  // namespace odbatch
