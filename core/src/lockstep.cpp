#include "odbatch/core/lockstep.hpp"

#include <algorithm>

#include "odbatch/core/round_admission.hpp"
#include "odbatch/core/screening.hpp"
#include "odbatch/core/warmup.hpp"

namespace odbatch {
namespace {

struct SimulatedRank {
  explicit SimulatedRank(std::span<const SampleCost> samples)
      : shard(samples), admission(samples.size()) {}
  std::span<const SampleCost> shard;
  RoundAdmission admission;
  RankWindow window;
};

// Admits the round's accepted samples from the shard; rejected ones are consumed too.
void admit(SimulatedRank& rank, std::uint32_t threshold, const BatchingConfig& c,
           RankLedger& ledger) {
  rank.admission.begin_round(threshold);
  while (rank.admission.wants_more()) {
    const auto position = rank.admission.consumed();
    SampleCost s = rank.shard[position];
    Screening verdict = screen_sample(s, c);
    if (verdict.verdict == Screening::Verdict::truncate) {
      s.tokens = verdict.truncate_to;
      s.labels = std::min(s.labels, s.tokens);
      verdict = screen_sample(s, c);
    }
    if (verdict.verdict == Screening::Verdict::reject) {
      ledger.rejected.push_back({s.id, std::string(to_string(verdict.reason)),
                                 "shard position " + std::to_string(position) + ", " +
                                     std::to_string(s.tokens) + " tokens"});
      rank.admission.count_rejected();
      continue;
    }
    rank.window.admit(s);
    rank.admission.count_accepted();
  }
}

}  // namespace

std::uint64_t round_bound(const BatchingConfig& config, std::uint64_t total_samples) {
  return ramp_rounds(config.warmup) + total_samples + 1;
}

LockstepResult run_lockstep(const LockstepScenario& scenario, const LockstepOptions& options) {
  const BatchingConfig& c = scenario.config;
  validate(c);
  const auto world = static_cast<std::uint32_t>(scenario.shards.size());
  LockstepResult result;
  result.ledgers.resize(world);
  std::vector<SimulatedRank> ranks;
  ranks.reserve(world);
  std::uint64_t total = 0;
  for (std::uint32_t r = 0; r < world; ++r) {
    ranks.emplace_back(scenario.shards[r]);
    total += scenario.shards[r].size();
    for (const auto& s : scenario.shards[r]) result.expected_ids.push_back(s.id);
  }
  const std::uint64_t max_rounds = options.max_rounds ? options.max_rounds : round_bound(c, total);
  const std::uint64_t fp = fingerprint(c, world);
  std::uint64_t prev_digest = 0, steps_so_far = 0;

  for (std::uint64_t round = 0;; ++round) {
    if (round >= max_rounds) {
      result.failure = "epoch did not end within " + std::to_string(max_rounds) + " rounds";
      break;
    }
    const std::uint32_t threshold = admission_threshold(c, round);
    std::vector<Proposal> proposals(world);
    for (std::uint32_t r = 0; r < world; ++r) {
      auto& rank = ranks[r];
      admit(rank, threshold, c, result.ledgers[r]);
      Proposal& p = proposals[r];
      p.fingerprint = fp;
      p.epoch = scenario.epoch;
      p.round = round;
      p.prev_digest = prev_digest;
      p.state = rank.admission.state(rank.window.empty());
      rank.window.describe(p);
    }

    RoundPlan plan;
    const std::uint32_t planners = options.every_rank_plans ? world : std::min(world, 1u);
    for (std::uint32_t r = 0; r < planners; ++r) {
      const auto received = options.exchange ? options.exchange(r, proposals) : proposals;
      if (auto d = check_proposals(received, proposals[r], c)) {
        result.failure = "rank " + std::to_string(r) + ": proposal of rank " +
                         std::to_string(d->rank) + " diverges in round " + std::to_string(round) +
                         " (" + d->field + "): " + d->message;
        return result;
      }
      auto mine = plan_round(received, c, scenario.epoch, round);
      if (r == 0) {
        plan = std::move(mine);
      } else if (!(mine == plan)) {
        result.failure = "rank " + std::to_string(r) +
                         " computed a different plan than rank 0 in round " + std::to_string(round);
        return result;
      }
    }
    for (std::uint32_t r = 0; r < world; ++r)
      ranks[r].window.apply(plan, r, steps_so_far, result.ledgers[r].steps);
    steps_so_far += plan.steps;
    prev_digest = plan.digest;
    result.rounds_run = round + 1;
    const bool over = plan.epoch_over;
    if (options.record_rounds) result.rounds.push_back({std::move(proposals), std::move(plan)});
    if (over) {
      result.finished = true;
      break;
    }
  }
  return result;
}

}  // namespace odbatch
