// Times the round plan function F for growing world sizes, both policies and both budget modes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/sim/length_distribution.hpp"

namespace odbatch::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kWindowSamplesPerRank = 1024;
constexpr std::uint32_t kTokenBudget = 16384;
constexpr LognormalLengths kLengths{600.0, 0.5};
constexpr std::uint32_t kWorldSizes[] = {8, 64, 512};
// One sample in this many has been deferred before, some of them up to max_defer_rounds, so
// forced groups take part as they do in a real run.
constexpr std::uint64_t kAgedOneIn = 32;

// Repetitions stop once both minimums are met or the cap is reached: enough samples for a p90
// on large worlds, bounded time on small ones.
constexpr int kWarmupRounds = 3;
constexpr int kMinRepetitions = 15;
constexpr int kMaxRepetitions = 2000;
constexpr auto kMinMeasuredTime = std::chrono::milliseconds(1200);

std::vector<Proposal> active_proposals(std::uint32_t world, const BatchingConfig& config) {
  SplitMix64 rng(0x5eed0000 + world);
  std::vector<Proposal> proposals(world);
  for (auto& p : proposals) {
    p.fingerprint = fingerprint(config, world);
    p.entered = kWindowSamplesPerRank;
    p.samples.resize(kWindowSamplesPerRank);
    for (auto& s : p.samples) {
      s.tokens = draw_length(kLengths, rng, config.max_seq_len);
      s.labels = std::max(1u, s.tokens / 2);
      if (rng.next() % kAgedOneIn == 0)
        s.age = 1 + static_cast<std::uint32_t>(rng.next() % config.max_defer_rounds);
    }
  }
  return proposals;
}

// Nearest-rank percentile of ascending durations.
double percentile(const std::vector<double>& ascending, double fraction) {
  const auto rank =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(ascending.size())));
  return ascending[std::clamp<std::size_t>(rank, 1, ascending.size()) - 1];
}

struct Timing {
  double min_us = 0;  // least disturbed by other load on the machine
  double median_us = 0;
  double p90_us = 0;
  int repetitions = 0;
  std::uint32_t steps = 0;
};

Timing time_plan(const std::vector<Proposal>& proposals, const BatchingConfig& config) {
  Timing t;
  for (int i = 0; i < kWarmupRounds; ++i) plan_round(proposals, config, 0, 0);
  std::vector<double> durations_us;
  const auto start = Clock::now();
  while (durations_us.size() < static_cast<std::size_t>(kMaxRepetitions) &&
         (durations_us.size() < static_cast<std::size_t>(kMinRepetitions) ||
          Clock::now() - start < kMinMeasuredTime)) {
    const auto before = Clock::now();
    const RoundPlan plan = plan_round(proposals, config, 0, 0);
    const auto after = Clock::now();
    t.steps = plan.steps;
    durations_us.push_back(std::chrono::duration<double, std::micro>(after - before).count());
  }
  std::sort(durations_us.begin(), durations_us.end());
  t.min_us = durations_us.front();
  t.median_us = percentile(durations_us, 0.5);
  t.p90_us = percentile(durations_us, 0.9);
  t.repetitions = static_cast<int>(durations_us.size());
  return t;
}

int run(const std::string& out_path) {
  Report report;
  report["benchmark"] = "plan_round";
  report["token_budget"] = kTokenBudget;
  report["window_samples_per_rank"] = kWindowSamplesPerRank;
  report["lengths"] = {{"distribution", "lognormal"}, {"mean", kLengths.mean}, {"cv", kLengths.cv}};
  report["aged_samples"] = "1 in " + std::to_string(kAgedOneIn) + ", age 1..max_defer_rounds";
  Report configurations = Report::array();
  Report linearity = Report::array();

  for (const auto policy : {Policy::balanced, Policy::reference}) {
    for (const auto mode : {BudgetMode::padded, BudgetMode::packed}) {
      BatchingConfig config;
      config.token_budget = kTokenBudget;
      config.window = kWindowSamplesPerRank;
      config.policy = policy;
      config.budget_mode = mode;
      // Microseconds per window sample by world size, from the median and from the minimum.
      std::vector<double> median_us_per_sample, min_us_per_sample;
      for (const std::uint32_t world : kWorldSizes) {
        const auto proposals = active_proposals(world, config);
        const Timing t = time_plan(proposals, config);
        const std::uint64_t samples = std::uint64_t{world} * kWindowSamplesPerRank;
        median_us_per_sample.push_back(t.median_us / static_cast<double>(samples));
        min_us_per_sample.push_back(t.min_us / static_cast<double>(samples));
        configurations.push_back(
            {{"policy", to_string(policy)},
             {"budget_mode", to_string(mode)},
             {"world_size", world},
             {"window_samples", samples},
             {"steps", t.steps},
             {"repetitions", t.repetitions},
             {"min_us", rounded(t.min_us, 1)},
             {"median_us", rounded(t.median_us, 1)},
             {"p90_us", rounded(t.p90_us, 1)},
             {"ns_per_sample", rounded(median_us_per_sample.back() * 1000.0, 2)}});
      }
      // 1.0 is perfectly linear in the number of window samples.
      linearity.push_back({{"policy", to_string(policy)},
                           {"budget_mode", to_string(mode)},
                           {"us_per_sample_ratio_512_over_8",
                            rounded(median_us_per_sample.back() / median_us_per_sample.front(), 3)},
                           {"min_us_per_sample_ratio_512_over_8",
                            rounded(min_us_per_sample.back() / min_us_per_sample.front(), 3)}});
    }
  }
  report["configurations"] = std::move(configurations);
  report["linearity"] = std::move(linearity);
  emit_report(report, out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0] << " [--out FILE]\n";
      return 2;
    }
  }
  try {
    return odbatch::bench::run(out_path);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
