#include "odbatch/core/plan.hpp"

#include <algorithm>
#include <numeric>

#include "odbatch/core/grouping.hpp"
#include "odbatch/core/loss_scale.hpp"
#include "odbatch/core/stable_hash.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kPermutationDomain = 0x7065726d75746521ULL;  // "permute!"
constexpr std::uint64_t kDigestDomain = 0x706c616e64696721ULL;       // "plandig!"

// Fits every rank's groups to the round's step count under the configured policy.
std::vector<FittedGroups> fit_all(std::span<const Proposal> proposals, const BatchingConfig& c,
                                  std::uint32_t& steps) {
  const std::size_t world = proposals.size();
  std::vector<FittedGroups> fitted(world);
  if (c.policy == Policy::balanced) {
    std::vector<std::vector<LocalGroup>> groups(world);
    for (std::size_t r = 0; r < world; ++r) groups[r] = group_balanced(proposals[r].samples, c);
    steps = balanced_step_count(proposals, groups);
    for (std::size_t r = 0; r < world; ++r) {
      fitted[r] = fit_balanced(std::move(groups[r]), steps, proposals[r].samples, c);
      // Pair groups of similar cost across ranks: costliest first (stable).
      std::stable_sort(fitted[r].groups.begin(), fitted[r].groups.end(),
                       [&](const LocalGroup& a, const LocalGroup& b) {
                         return a.cost(c.budget_mode) > b.cost(c.budget_mode);
                       });
    }
  } else {
    std::vector<ReferenceGrouping> groupings(world);
    for (std::size_t r = 0; r < world; ++r) groupings[r] = group_reference(proposals[r].samples, c);
    steps = reference_step_count(proposals, groupings);
    for (std::size_t r = 0; r < world; ++r) {
      // Ascending-length order, as the reference pairs its groups.
      fitted[r] = fit_reference(std::move(groupings[r].groups), steps, proposals[r].samples, c);
      auto& deferred = fitted[r].deferred;
      deferred.insert(deferred.end(), groupings[r].deferred.begin(), groupings[r].deferred.end());
      std::sort(deferred.begin(), deferred.end());
    }
  }
  return fitted;
}

}  // namespace

std::vector<std::uint32_t> step_permutation(std::uint64_t seed, std::uint64_t epoch,
                                            std::uint64_t round, std::uint32_t steps) {
  std::vector<std::uint32_t> p(steps);
  std::iota(p.begin(), p.end(), 0u);
  for (std::uint32_t i = steps; i-- > 1;) {
    const auto h = stable_hash({kPermutationDomain, seed, epoch, round, steps, i});
    std::swap(p[i], p[reduce_to_range(h, std::uint64_t{i} + 1)]);
  }
  return p;
}

RoundPlan plan_round(std::span<const Proposal> proposals, const BatchingConfig& config,
                     std::uint64_t epoch, std::uint64_t round) {
  RoundPlan plan;
  plan.epoch = epoch;
  plan.round = round;
  const auto world = static_cast<std::uint32_t>(proposals.size());
  plan.epoch_over = std::all_of(proposals.begin(), proposals.end(),
                                [](const Proposal& p) { return p.state == RankState::done; });
  auto fitted = fit_all(proposals, config, plan.steps);
  const auto order = step_permutation(config.seed, epoch, round, plan.steps);

  plan.ranks.resize(world);
  plan.totals.assign(plan.steps, StepTotals{});
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto& groups = fitted[r].groups;
    const auto& window = proposals[r].samples;
    RankPlan& rp = plan.ranks[r];
    rp.steps.resize(plan.steps);
    rp.deferred = std::move(fitted[r].deferred);
    for (std::uint32_t step = 0; step < plan.steps; ++step) {
      const std::uint32_t slot = order[step];
      if (slot >= groups.size()) continue;  // IDLE
      const LocalGroup& g = groups[slot];
      StepGroup& s = rp.steps[step];
      s.first = static_cast<std::uint32_t>(rp.members.size());
      s.count = static_cast<std::uint32_t>(g.members.size());
      s.max_tokens = g.max_tokens;
      s.sum_tokens = g.sum_tokens;
      s.sum_patches = g.sum_patches;
      s.over_budget = g.over_budget;
      for (auto i : g.members) s.sum_labels += window[i].labels;
      rp.members.insert(rp.members.end(), g.members.begin(), g.members.end());
      plan.totals[step].samples += s.count;
      plan.totals[step].tokens += s.sum_tokens;
      plan.totals[step].labels += s.sum_labels;
    }
  }

  StableHasher digest(kDigestDomain);
  digest.add(epoch).add(round).add(world).add(plan.steps).add(plan.epoch_over);
  for (auto& rp : plan.ranks) {
    rp.loss_scale.resize(plan.steps);
    for (std::uint32_t step = 0; step < plan.steps; ++step) {
      rp.loss_scale[step] =
          loss_scale(config.loss_scaling, world, rp.steps[step], plan.totals[step]);
      digest.add(rp.steps[step].count);
      for (auto i : rp.group(step)) digest.add(i);
    }
    digest.add(rp.deferred.size());
  }
  plan.digest = digest.digest();
  return plan;
}

}  // namespace odbatch
