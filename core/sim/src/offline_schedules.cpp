#include "odbatch/sim/offline_schedules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "odbatch/core/grouping.hpp"
#include "odbatch/sim/seeded_shuffle.hpp"

namespace odbatch {
namespace {

// Shuffles the groups and deals them round-robin to the ranks.
Schedule deal(std::vector<StepSamples> groups, std::uint32_t world, std::uint64_t seed) {
  if (world == 0) throw std::invalid_argument("world size must be at least 1");
  SplitMix64 rng(seed);
  seeded_shuffle(std::span<StepSamples>(groups), rng);
  Schedule schedule;
  schedule.ranks.resize(world);
  const std::size_t steps = (groups.size() + world - 1) / world;
  for (auto& rank : schedule.ranks) rank.resize(steps);
  for (std::size_t g = 0; g < groups.size(); ++g)
    schedule.ranks[g % world][g / world] = std::move(groups[g]);
  return schedule;
}

// Whether `s` still fits the group of `members` under the budgets.
bool fits(const std::vector<std::uint32_t>& members, std::uint32_t longest, std::uint64_t tokens,
          std::uint64_t patches, const SampleCost& s, const BatchingConfig& c) {
  if (c.patch_budget > 0 && patches + s.patches > c.patch_budget) return false;
  if (c.budget_mode == BudgetMode::packed) return tokens + s.tokens <= c.token_budget;
  return (members.size() + 1) * std::uint64_t{std::max(longest, s.tokens)} <= c.token_budget;
}

}  // namespace

Schedule global_token_budget_schedule(std::span<const SampleCost> samples,
                                      const BatchingConfig& config, std::uint32_t world,
                                      std::uint64_t seed) {
  std::vector<ProposedSample> epoch;
  epoch.reserve(samples.size());
  for (const auto& s : samples) epoch.push_back({s.tokens, s.labels, s.patches, 0});
  std::vector<StepSamples> groups;
  for (auto& g : group_balanced(epoch, config)) groups.push_back(std::move(g.members));
  return deal(std::move(groups), world, seed);
}

Schedule bucketed_token_budget_schedule(std::span<const SampleCost> samples,
                                        const BatchingConfig& config, std::uint32_t world,
                                        std::uint32_t buckets_per_octave, std::uint64_t seed) {
  if (buckets_per_octave == 0) throw std::invalid_argument("buckets per octave must be at least 1");
  std::map<std::int64_t, std::vector<std::uint32_t>> buckets;
  for (std::uint32_t i = 0; i < samples.size(); ++i) {
    const double octave = std::log2(std::max(samples[i].tokens, 1u));
    buckets[static_cast<std::int64_t>(std::floor(buckets_per_octave * octave))].push_back(i);
  }
  SplitMix64 rng(seed);
  std::vector<StepSamples> groups;
  for (auto& [bucket, members] : buckets) {
    seeded_shuffle(std::span<std::uint32_t>(members), rng);
    StepSamples group;
    std::uint32_t longest = 0;
    std::uint64_t tokens = 0, patches = 0;
    for (auto i : members) {
      const SampleCost& s = samples[i];
      if (!group.empty() && !fits(group, longest, tokens, patches, s, config)) {
        groups.push_back(std::move(group));
        group.clear();
        longest = 0;
        tokens = patches = 0;
      }
      group.push_back(i);
      longest = std::max(longest, s.tokens);
      tokens += s.tokens;
      patches += s.patches;
    }
    if (!group.empty()) groups.push_back(std::move(group));
  }
  return deal(std::move(groups), world, mix64(seed));
}

}  // namespace odbatch
