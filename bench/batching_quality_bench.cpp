// Batching quality of whole simulated epochs: steps and padding of the online plan against the
// offline oracles GMT and LB, for both policies, several length distributions and windows.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"
#include "odbatch/sim/length_distribution.hpp"
#include "odbatch/sim/offline_oracles.hpp"

namespace odbatch::bench {
namespace {

constexpr std::uint32_t kWorldSize = 8;
constexpr std::uint32_t kTokenBudget = 16384;
constexpr std::uint32_t kWindows[] = {256, 1024};
constexpr std::uint32_t kTargetWindow = 1024;

// Targets of the balanced policy at kTargetWindow (PROTOCOL.md, expected quality).
constexpr double kMinPaddingEfficiency = 0.98;
constexpr double kMaxStepsOverGmt = 1.03;
constexpr double kMaxStepsOverLb = 1.02;

using LengthDistribution = std::variant<LognormalLengths, BimodalLengths>;

struct Distribution {
  std::string name;
  LengthDistribution lengths;
};

std::vector<Distribution> distributions() {
  return {{"lognormal mean 600 cv 0.3", LognormalLengths{600.0, 0.3}},
          {"lognormal mean 600 cv 0.5", LognormalLengths{600.0, 0.5}},
          {"lognormal mean 600 cv 1.0", LognormalLengths{600.0, 1.0}},
          {"bimodal 80% mean 200 cv 0.3, 20% mean 4000 cv 0.3", BimodalLengths{}}};
}

// Every shard's samples with unique ids; labels are about half the tokens and never 0, and no
// length exceeds max_seq_len, so screening accepts every sample.
std::vector<std::vector<SampleCost>> make_shards(const LengthDistribution& lengths,
                                                 std::uint64_t samples_per_rank, std::uint64_t seed,
                                                 const BatchingConfig& config) {
  SplitMix64 rng(seed);
  std::vector<std::vector<SampleCost>> shards(kWorldSize);
  SampleId next_id = 0;
  for (auto& shard : shards) {
    shard.resize(samples_per_rank);
    for (auto& s : shard) {
      s.id = next_id++;
      s.tokens = std::visit([&](const auto& d) { return draw_length(d, rng, config.max_seq_len); },
                            lengths);
      s.labels = std::max(1u, s.tokens / 2);
    }
  }
  return shards;
}

std::vector<std::vector<std::uint32_t>> shard_lengths(
    const std::vector<std::vector<SampleCost>>& shards) {
  std::vector<std::vector<std::uint32_t>> lengths(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r)
    for (const auto& s : shards[r]) lengths[r].push_back(s.tokens);
  return lengths;
}

double ratio(std::uint64_t numerator, std::uint64_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

struct EpochQuality {
  std::uint64_t steps = 0;  // per rank
  std::uint64_t rounds = 0;
  double padding_efficiency = 0;
  double budget_fill = 0;  // sum |g| * max L / (B * non-IDLE steps)
  double idle_fraction = 0;
  std::uint64_t audit_problems = 0;
  std::uint64_t samples_emitted = 0;
  std::uint64_t samples_rejected = 0;
  std::string failure;  // the simulator's, when the epoch did not end cleanly
  double wall_s = 0;
};

EpochQuality simulate(const std::vector<std::vector<SampleCost>>& shards,
                      const BatchingConfig& config) {
  LockstepScenario scenario{config, 0, shards};
  LockstepOptions options;
  options.every_rank_plans = false;  // one planner suffices: agreement is not measured here
  const auto start = std::chrono::steady_clock::now();
  const LockstepResult result = run_lockstep(scenario, options);
  EpochQuality q;
  q.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  q.rounds = result.rounds_run;
  q.failure = result.failure;
  if (!result.finished && q.failure.empty()) q.failure = "epoch did not finish";

  const AuditReport audit = audit_epoch(result.expected_ids, result.ledgers, config);
  q.audit_problems = audit.problems;
  q.samples_emitted = audit.emitted;
  q.samples_rejected = audit.rejected;

  std::uint64_t sum_tokens = 0, padded_tokens = 0, idle_steps = 0, all_steps = 0;
  for (const auto& ledger : result.ledgers) {
    q.steps = std::max<std::uint64_t>(q.steps, ledger.steps.size());
    all_steps += ledger.steps.size();
    for (const auto& step : ledger.steps) {
      if (step.idle()) {
        ++idle_steps;
        continue;
      }
      std::uint32_t longest = 0;
      for (const auto& s : step.samples) {
        sum_tokens += s.tokens;
        longest = std::max(longest, s.tokens);
      }
      padded_tokens += std::uint64_t{longest} * step.samples.size();
    }
  }
  q.padding_efficiency = padded_tokens == 0
                             ? 1.0
                             : static_cast<double>(sum_tokens) / static_cast<double>(padded_tokens);
  q.budget_fill =
      ratio(padded_tokens, std::uint64_t{config.token_budget} * (all_steps - idle_steps));
  q.idle_fraction = ratio(idle_steps, all_steps);
  return q;
}

Report target(const std::string& distribution, std::uint32_t window, std::string_view name,
              double value, std::string_view comparison, double bound, bool pass) {
  return {{"distribution", distribution},
          {"window", window},
          {"target", name},
          {"value", rounded(value, 4)},
          {"comparison", comparison},
          {"bound", rounded(bound, 4)},
          {"pass", pass}};
}

int run(std::uint64_t samples_per_rank, std::uint64_t seed, const std::string& out_path) {
  BatchingConfig base;
  base.token_budget = kTokenBudget;
  base.warmup = Warmup::none;

  Report report;
  report["benchmark"] = "batching_quality";
  report["world_size"] = kWorldSize;
  report["token_budget"] = kTokenBudget;
  report["budget_mode"] = to_string(base.budget_mode);
  report["warmup"] = to_string(base.warmup);
  report["samples_per_rank"] = samples_per_rank;
  report["length_seed"] = seed;
  Report rows = Report::array();
  Report targets = Report::array();
  bool all_pass = true;
  auto add_target = [&](Report t) {
    all_pass = all_pass && t["pass"].get<bool>();
    targets.push_back(std::move(t));
  };

  for (const auto& distribution : distributions()) {
    const auto shards = make_shards(distribution.lengths, samples_per_rank, seed, base);
    const auto lengths = shard_lengths(shards);
    const PerShardOracle lb = per_shard_oracle(lengths, base);
    const GlobalOracle gmt = global_oracle(lengths, base);
    const double gmt_budget_fill =
        ratio(gmt.grouping.padded_tokens, std::uint64_t{kTokenBudget} * gmt.grouping.groups);
    for (const std::uint32_t window : kWindows) {
      auto simulate_row = [&](Policy policy) {
        BatchingConfig config = base;
        config.window = window;
        config.policy = policy;
        const EpochQuality q = simulate(shards, config);
        rows.push_back({{"distribution", distribution.name},
                        {"window", window},
                        {"policy", to_string(policy)},
                        {"steps", q.steps},
                        {"rounds", q.rounds},
                        {"padding_efficiency", rounded(q.padding_efficiency, 4)},
                        {"budget_fill", rounded(q.budget_fill, 4)},
                        {"idle_fraction", rounded(q.idle_fraction, 4)},
                        {"gmt_steps", gmt.steps},
                        {"lb_steps", lb.steps},
                        {"steps_over_gmt", rounded(ratio(q.steps, gmt.steps), 4)},
                        {"steps_over_lb", rounded(ratio(q.steps, lb.steps), 4)},
                        {"gmt_padding_efficiency", rounded(gmt.grouping.padding_efficiency(), 4)},
                        {"gmt_budget_fill", rounded(gmt_budget_fill, 4)},
                        {"lb_padding_efficiency", rounded(lb.total.padding_efficiency(), 4)},
                        {"samples_emitted", q.samples_emitted},
                        {"samples_rejected", q.samples_rejected},
                        {"audit_problems", q.audit_problems},
                        {"failure", q.failure},
                        {"wall_s", rounded(q.wall_s, 2)}});
        return q;
      };
      const EpochQuality balanced = simulate_row(Policy::balanced);
      const EpochQuality reference = simulate_row(Policy::reference);
      const auto& name = distribution.name;
      add_target(target(name, window, "balanced steps < reference steps",
                        static_cast<double>(balanced.steps), "<",
                        static_cast<double>(reference.steps), balanced.steps < reference.steps));
      add_target(target(name, window, "balanced padding efficiency > reference",
                        balanced.padding_efficiency, ">", reference.padding_efficiency,
                        balanced.padding_efficiency > reference.padding_efficiency));
      add_target(target(name, window, "epoch audit clean (both policies)",
                        static_cast<double>(balanced.audit_problems + reference.audit_problems),
                        "==", 0.0,
                        balanced.audit_problems + reference.audit_problems == 0 &&
                            balanced.failure.empty() && reference.failure.empty()));
      if (window != kTargetWindow) continue;
      const double over_gmt = ratio(balanced.steps, gmt.steps);
      const double over_lb = ratio(balanced.steps, lb.steps);
      add_target(target(name, window, "balanced padding efficiency", balanced.padding_efficiency,
                        ">=", kMinPaddingEfficiency,
                        balanced.padding_efficiency >= kMinPaddingEfficiency));
      add_target(target(name, window, "balanced steps / GMT", over_gmt, "<=", kMaxStepsOverGmt,
                        over_gmt <= kMaxStepsOverGmt));
      add_target(target(name, window, "balanced steps / LB", over_lb, "<=", kMaxStepsOverLb,
                        over_lb <= kMaxStepsOverLb));
    }
  }
  report["rows"] = std::move(rows);
  report["targets"] = {{"all_pass", all_pass}, {"checks", std::move(targets)}};
  emit_report(report, out_path);
  return 0;
}

bool parse_number(std::string_view text, std::uint64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  std::string out_path;
  std::uint64_t samples_per_rank = 20000;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--samples-per-rank" && i + 1 < argc &&
               odbatch::bench::parse_number(argv[i + 1], samples_per_rank) &&
               samples_per_rank > 0) {
      ++i;
    } else if (arg == "--seed" && i + 1 < argc && odbatch::bench::parse_number(argv[i + 1], seed)) {
      ++i;
    } else {
      std::cerr << "usage: " << argv[0] << " [--out FILE] [--samples-per-rank N] [--seed S]\n";
      return 2;
    }
  }
  try {
    return odbatch::bench::run(samples_per_rank, seed, out_path);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
