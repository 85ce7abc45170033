#include "plan_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "odbatch/core/screening.hpp"
#include "odbatch/sim/offline_oracles.hpp"

namespace odbatch::cli {
namespace {

// Wider worlds are cut off: the line is for reading, the JSON report has every rank.
constexpr std::size_t kRanksShown = 8;

char state_letter(RankState state) {
  switch (state) {
    case RankState::active:
      return 'A';
    case RankState::draining:
      return 'R';
    case RankState::done:
      return 'D';
  }
  return '?';
}

template <class... Values>
std::string cell(const char* format, Values... values) {
  const int size = std::snprintf(nullptr, 0, format, values...);
  std::string out(static_cast<std::size_t>(std::max(size, 0)), '\0');
  std::snprintf(out.data(), out.size() + 1, format, values...);
  return out;
}

}  // namespace

std::string summarize_rounds(std::span<const LockstepRound> rounds, const BatchingConfig& config) {
  std::ostringstream out;
  out << "policy " << to_string(config.policy) << ", token_budget " << config.token_budget << " ("
      << to_string(config.budget_mode) << "), window " << config.window << ", warmup "
      << to_string(config.warmup) << "\n";
  out << "per rank: state (A ACTIVE, R DRAINING, D DONE) window-samples / IDLE steps / deferred\n";
  if (rounds.empty()) return out.str();
  const std::size_t world = rounds.front().proposals.size();
  out << "round     T ";
  for (std::size_t r = 0; r < std::min(world, kRanksShown); ++r) out << cell(" rank %-10zu", r);
  if (world > kRanksShown) out << " ...";
  out << '\n';
  for (const auto& [proposals, plan] : rounds) {
    out << cell("%5llu %5u ", static_cast<unsigned long long>(plan.round), plan.steps);
    for (std::size_t r = 0; r < std::min(world, kRanksShown); ++r) {
      const auto& steps = plan.ranks[r].steps;
      const auto idle =
          std::count_if(steps.begin(), steps.end(), [](const StepGroup& s) { return s.idle(); });
      out << cell(" %c %4zu/%3ld/%4zu", state_letter(proposals[r].state),
                  proposals[r].samples.size(), static_cast<long>(idle),
                  plan.ranks[r].deferred.size());
    }
    out << (plan.epoch_over ? "  epoch over\n" : "\n");
  }
  return out.str();
}

std::string summarize_epoch(std::span<const std::vector<SampleCost>> shards,
                            const LockstepResult& result, const AuditReport& audit,
                            const BatchingConfig& config) {
  // The oracles see what the run admitted: accepted samples, truncated as admission truncates.
  std::vector<std::vector<std::uint32_t>> lengths(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r)
    for (const auto& s : shards[r]) {
      const auto verdict = screen_sample(s, config);
      if (verdict.verdict == Screening::Verdict::accept) lengths[r].push_back(s.tokens);
      if (verdict.verdict == Screening::Verdict::truncate)
        lengths[r].push_back(verdict.truncate_to);
    }
  const auto lb = per_shard_oracle(lengths, config);
  const auto gmt = global_oracle(lengths, config);

  std::uint64_t steps = 0, idle = 0, sum_tokens = 0, padded_tokens = 0;
  for (const auto& ledger : result.ledgers)
    for (const auto& step : ledger.steps) {
      ++steps;
      if (step.idle()) ++idle;
      std::uint64_t longest = 0;
      for (const auto& s : step.samples) {
        sum_tokens += s.tokens;
        longest = std::max<std::uint64_t>(longest, s.tokens);
      }
      padded_tokens += longest * step.samples.size();
    }
  std::ostringstream out;
  out << cell("steps per rank %llu (offline bounds: per-shard LB %llu, global GMT %llu)\n",
              static_cast<unsigned long long>(audit.steps),
              static_cast<unsigned long long>(lb.steps),
              static_cast<unsigned long long>(gmt.steps));
  out << cell(
      "padding efficiency %.4f (LB %.4f, GMT %.4f), IDLE steps %.1f%%\n",
      padded_tokens ? static_cast<double>(sum_tokens) / static_cast<double>(padded_tokens) : 1.0,
      lb.total.padding_efficiency(), gmt.grouping.padding_efficiency(),
      steps ? 100.0 * static_cast<double>(idle) / static_cast<double>(steps) : 0.0);
  if (!result.failure.empty()) out << "run failed: " << result.failure << '\n';
  out << audit.summary() << '\n';
  return out.str();
}

}  // namespace odbatch::cli
