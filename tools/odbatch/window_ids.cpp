#include "window_ids.hpp"

#include <stdexcept>
#include <string>
#include <unordered_set>

namespace odbatch::cli {
namespace {

// A rank's admitted samples in shard order: its shard minus the samples it rejected.
std::vector<SampleId> admitted_ids(const std::vector<SampleCost>& shard, const RankLedger& ledger) {
  std::unordered_set<SampleId> rejected;
  for (const auto& r : ledger.rejected) rejected.insert(r.id);
  std::vector<SampleId> ids;
  for (const auto& s : shard)
    if (!rejected.contains(s.id)) ids.push_back(s.id);
  return ids;
}

}  // namespace

WindowIds replay_window_ids(const LockstepScenario& scenario, const LockstepResult& result) {
  const std::size_t world = scenario.shards.size();
  std::vector<std::vector<SampleId>> admitted(world);
  for (std::size_t r = 0; r < world; ++r)
    admitted[r] = admitted_ids(scenario.shards[r], result.ledgers[r]);
  std::vector<std::size_t> next_admitted(world, 0);
  std::vector<std::vector<SampleId>> kept(world);

  WindowIds by_round;
  for (const auto& record : result.rounds) {
    auto& windows = by_round.emplace_back(world);
    for (std::size_t r = 0; r < world; ++r) {
      const Proposal& proposal = record.proposals[r];
      auto& window = windows[r];
      window = std::move(kept[r]);
      for (std::uint32_t i = 0; i < proposal.entered; ++i) {
        if (next_admitted[r] >= admitted[r].size())
          throw std::logic_error("window replay ran out of admitted samples on rank " +
                                 std::to_string(r));
        window.push_back(admitted[r][next_admitted[r]++]);
      }
      if (window.size() != proposal.samples.size())
        throw std::logic_error("window replay disagrees with the proposal of rank " +
                               std::to_string(r) + " in round " + std::to_string(proposal.round));
      kept[r].clear();
      for (const auto i : record.plan.ranks[r].deferred) kept[r].push_back(window[i]);
    }
  }
  return by_round;
}

}  // namespace odbatch::cli
