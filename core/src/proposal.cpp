#include "odbatch/core/proposal.hpp"

#include <algorithm>

#include "odbatch/core/rank_names.hpp"
#include "odbatch/core/screening.hpp"

namespace odbatch {
namespace {

std::string mismatch(std::uint64_t got, std::uint64_t want) {
  return "got " + std::to_string(got) + ", expected " + std::to_string(want);
}

std::optional<Divergence> check_samples(std::uint32_t rank, const Proposal& p,
                                        const BatchingConfig& c) {
  if (p.state == RankState::done && !p.samples.empty())
    return Divergence{rank, "state", "DONE with " + std::to_string(p.samples.size()) + " samples"};
  if (p.state == RankState::draining && p.samples.empty())
    return Divergence{rank, "state", "DRAINING with an empty window"};
  if (p.entered > p.samples.size())
    return Divergence{rank, "entered",
                      std::to_string(p.entered) + " entered but the window holds " +
                          std::to_string(p.samples.size())};
  if (c.policy == Policy::balanced &&
      p.samples.size() > std::uint64_t{c.window} * (c.max_defer_rounds + 1))
    return Divergence{rank, "samples",
                      "window of " + std::to_string(p.samples.size()) +
                          " samples exceeds (max_defer_rounds + 1) * window"};
  for (std::size_t i = 0; i < p.samples.size(); ++i) {
    const auto& s = p.samples[i];
    const auto where = "sample " + std::to_string(i) + ": ";
    if (s.labels > s.tokens) return Divergence{rank, "samples", where + "more labels than tokens"};
    const SampleCost cost{0, s.tokens, s.labels, s.patches};
    if (screen_sample(cost, c).verdict != Screening::Verdict::accept)
      return Divergence{rank, "samples",
                        where + "would not pass admission (tokens " + std::to_string(s.tokens) +
                            ", labels " + std::to_string(s.labels) + ")"};
    if (c.policy == Policy::balanced && s.age > c.max_defer_rounds)
      return Divergence{rank, "samples",
                        where + "age " + std::to_string(s.age) + " exceeds max_defer_rounds"};
  }
  return std::nullopt;
}

// Settings come before the fingerprint: a rank configured apart is named by its setting, not by
// a hash mismatch.
std::optional<Divergence> check_settings(std::span<const Proposal> proposals) {
  // Most rounds carry none: they cost one look per proposal.
  if (std::all_of(proposals.begin(), proposals.end(),
                  [](const Proposal& p) { return p.settings.empty(); }))
    return std::nullopt;
  std::vector<std::vector<RunSetting>> per_rank;
  std::vector<std::uint32_t> without;
  for (std::uint32_t r = 0; r < proposals.size(); ++r) {
    per_rank.push_back(proposals[r].settings);
    if (proposals[r].settings.empty()) without.push_back(r);
  }
  if (!without.empty())
    return Divergence{without.front(), "settings",
                      rank_names(without) +
                          " sent no settings in a round where the others did "
                          "(ranks started this epoch at different rounds)"};
  const auto differences = rank_setting_differences(per_rank);
  if (differences.empty()) return std::nullopt;
  std::string message = "the ranks are configured differently: ";
  for (std::size_t i = 0; i < differences.size(); ++i) message += (i ? "; " : "") + differences[i];
  std::uint32_t odd = 1;
  while (odd + 1 < per_rank.size() && per_rank[odd] == per_rank.front()) ++odd;
  return Divergence{odd, "settings", message};
}

}  // namespace

std::string_view to_string(RankState state) {
  switch (state) {
    case RankState::active:
      return "ACTIVE";
    case RankState::draining:
      return "DRAINING";
    case RankState::done:
      return "DONE";
  }
  return "?";
}

std::optional<Divergence> check_proposals(std::span<const Proposal> proposals,
                                          const Proposal& expected, const BatchingConfig& config) {
  if (auto d = check_settings(proposals)) return d;
  for (std::uint32_t r = 0; r < proposals.size(); ++r) {
    const Proposal& p = proposals[r];
    if (p.version != expected.version)
      return Divergence{r, "version", mismatch(p.version, expected.version)};
    if (p.fingerprint != expected.fingerprint)
      return Divergence{r, "fingerprint",
                        "configuration, seed, world size or code version differ (" +
                            mismatch(p.fingerprint, expected.fingerprint) + ")"};
    if (p.epoch != expected.epoch) return Divergence{r, "epoch", mismatch(p.epoch, expected.epoch)};
    if (p.round != expected.round) return Divergence{r, "round", mismatch(p.round, expected.round)};
    if (p.prev_digest != expected.prev_digest)
      return Divergence{r, "prev_digest",
                        "plans of the previous round differ (" +
                            mismatch(p.prev_digest, expected.prev_digest) + ")"};
    if (static_cast<std::uint8_t>(p.state) > static_cast<std::uint8_t>(RankState::done))
      return Divergence{r, "state", "unknown state " + std::to_string(static_cast<int>(p.state))};
    if (auto d = check_samples(r, p, config)) return d;
  }
  return std::nullopt;
}

}  // namespace odbatch
