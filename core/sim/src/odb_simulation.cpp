#include "odbatch/sim/odb_simulation.hpp"

#include "odbatch/core/grouping.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"

namespace odbatch {
namespace {

// The groups a rank formed from its window before the round's alignment.
std::uint64_t local_group_count(const Proposal& proposal, const BatchingConfig& config) {
  if (config.policy == Policy::balanced) return group_balanced(proposal.samples, config).size();
  return group_reference(proposal.samples, config).groups.size();
}

}  // namespace

double OdbSimulation::alignment_inflation() const {
  return local_groups == 0
             ? 1.0
             : static_cast<double>(aligned_rank_steps) / static_cast<double>(local_groups);
}

OdbSimulation simulate_odb(std::span<const SampleCost> samples,
                           std::span<const std::vector<std::uint32_t>> shards,
                           const BatchingConfig& config) {
  LockstepScenario scenario;
  scenario.config = config;
  for (const auto& shard : shards) {
    auto& costs = scenario.shards.emplace_back();
    costs.reserve(shard.size());
    for (auto i : shard) {
      costs.push_back(samples[i]);
      costs.back().id = i;  // ids are epoch indices, so emitted steps map straight to the schedule
    }
  }
  LockstepOptions options;
  options.every_rank_plans = false;  // agreement is tested elsewhere; one planner suffices here
  options.record_rounds = true;
  const LockstepResult result = run_lockstep(scenario, options);

  OdbSimulation sim;
  sim.rounds = result.rounds_run;
  sim.failure = result.failure;
  if (!result.finished && sim.failure.empty()) sim.failure = "epoch did not finish";
  sim.audit_problems = audit_epoch(result.expected_ids, result.ledgers, config).problems;
  const auto world = static_cast<std::uint64_t>(shards.size());
  sim.schedule.ranks.resize(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const auto& ledger = result.ledgers[r];
    auto& rank = sim.schedule.ranks[r];
    rank.reserve(ledger.steps.size());
    for (const auto& step : ledger.steps) {
      auto& members = rank.emplace_back();
      members.reserve(step.samples.size());
      for (const auto& s : step.samples) members.push_back(static_cast<std::uint32_t>(s.id));
    }
  }
  for (const auto& round : result.rounds) {
    sim.aligned_rank_steps += std::uint64_t{round.plan.steps} * world;
    for (std::size_t r = 0; r < round.proposals.size(); ++r) {
      const Proposal& proposal = round.proposals[r];
      sim.local_groups += local_group_count(proposal, config);
      const RankPlan& plan = round.plan.ranks[r];
      for (std::uint32_t step = 0; step < round.plan.steps; ++step)
        for (auto i : plan.group(step)) {
          const std::uint32_t age = proposal.samples[i].age;
          if (sim.deferral_histogram.size() <= age) sim.deferral_histogram.resize(age + 1);
          ++sim.deferral_histogram[age];
        }
    }
  }
  return sim;
}

}  // namespace odbatch
