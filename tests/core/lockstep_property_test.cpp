// Property test of PROTOCOL.md's guarantees over seeded random scenarios, through a lockstep
// simulation in which every rank decodes all proposals from their wire encoding and plans alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"
#include "odbatch/sim/length_distribution.hpp"

using namespace odbatch;

namespace {

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

template <class T>
T pick(SplitMix64& rng, std::initializer_list<T> options) {
  return options.begin()[rng.next() % options.size()];
}

std::uint32_t between(SplitMix64& rng, std::uint32_t lo, std::uint32_t hi) {
  return lo + static_cast<std::uint32_t>(rng.next() % (std::uint64_t{hi} - lo + 1));
}

LockstepScenario random_scenario(std::uint64_t seed) {
  SplitMix64 rng(seed);
  LockstepScenario s;
  auto& c = s.config;
  c.token_budget = pick<std::uint32_t>(rng, {64, 256, 1024, 4096, 16384});
  c.budget_mode = pick(rng, {BudgetMode::padded, BudgetMode::packed});
  c.max_seq_len = c.token_budget * pick<std::uint32_t>(rng, {1, 2});
  c.window = between(rng, 1, 48);
  c.warmup = pick(rng, {Warmup::none, Warmup::short_ramp, Warmup::linear});
  c.max_defer_rounds = between(rng, 0, 5);
  c.hold_pct = between(rng, 70, 100);
  c.policy = pick(rng, {Policy::balanced, Policy::reference});
  c.loss_scaling = pick(
      rng, {LossScaling::none, LossScaling::samples, LossScaling::tokens, LossScaling::labels});
  c.over_budget = pick(rng, {OverBudgetPolicy::singleton, OverBudgetPolicy::reject});
  c.over_length = pick(rng, {OverLengthPolicy::truncate, OverLengthPolicy::reject});
  c.zero_labels = pick(rng, {ZeroLabelPolicy::reject, ZeroLabelPolicy::keep});
  const bool vision = rng.next() % 3 == 0;
  c.patch_budget = vision ? between(rng, 4, 2000) : 0;
  c.seed = rng.next();
  s.epoch = rng.next() % 4;

  const std::uint32_t world = between(rng, 1, 16);
  const bool long_shards = rng.next() % 10 == 0;
  const double mean = c.token_budget / static_cast<double>(between(rng, 2, 60));
  const double cv = 0.1 + 1.4 * rng.uniform();
  const bool bimodal = rng.next() % 3 == 0;
  const BimodalLengths two_modes{{mean * 0.3, cv / 2}, {mean * 3, cv / 2}, 0.8};
  SampleId id = 1000 * seed;
  for (std::uint32_t r = 0; r < world; ++r) {
    auto& shard = s.shards.emplace_back();
    const std::uint32_t size = rng.next() % 7 == 0 ? 0 : between(rng, 1, long_shards ? 400 : 40);
    for (std::uint32_t i = 0; i < size; ++i) {
      SampleCost sample{id++, 0, 0, 0};
      const auto roll = rng.next() % 100;
      if (roll < 2) {
        sample.tokens = 0;
      } else if (roll < 4) {
        sample.tokens = c.token_budget + between(rng, 1, c.token_budget);
      } else {
        sample.tokens = bimodal ? draw_length(two_modes, rng, c.max_seq_len + 10)
                                : draw_length(LognormalLengths{mean, cv}, rng, c.max_seq_len + 10);
      }
      sample.labels = rng.next() % 20 == 0 ? 0 : between(rng, 0, sample.tokens);
      if (vision && rng.next() % 3 == 0) sample.patches = between(rng, 1, c.patch_budget + 50);
      shard.push_back(sample);
    }
  }
  return s;
}

// Every rank receives every proposal as bytes and decodes it itself.
std::vector<Proposal> over_the_wire(std::uint32_t, std::span<const Proposal> sent) {
  std::vector<Proposal> received(sent.size());
  std::vector<std::byte> frame;
  for (std::size_t r = 0; r < sent.size(); ++r) {
    encode_proposal(sent[r], frame);
    if (auto error = decode_proposal(frame, received[r]))
      throw std::runtime_error("decode failed: " + error->message);
  }
  return received;
}

// Guarantees checked on the recorded rounds; returns the first violation.
std::string check_rounds(const LockstepScenario& s, const LockstepResult& run) {
  const auto& c = s.config;
  std::uint64_t steps = 0;
  for (const auto& [proposals, plan] : run.rounds) {
    const auto where = "round " + std::to_string(plan.round) + ": ";
    steps += plan.steps;
    const bool any_sample = std::any_of(proposals.begin(), proposals.end(),
                                        [](const Proposal& p) { return !p.samples.empty(); });
    const bool any_active = std::any_of(proposals.begin(), proposals.end(), [](const Proposal& p) {
      return p.state == RankState::active;
    });
    std::uint64_t emitted = 0;
    for (const auto& t : plan.totals) emitted += t.samples;
    // Guarantee 4: progress in every round that holds a sample.
    if (any_sample && emitted == 0) return where + "holds samples but emits none";
    for (std::uint32_t step = 0; step < plan.steps; ++step)
      if (plan.totals[step].samples == 0) return where + "a step is IDLE on every rank";
    for (std::size_t r = 0; r < proposals.size(); ++r) {
      const auto& rp = plan.ranks[r];
      if (rp.steps.size() != plan.steps) return where + "rank plan has the wrong step count";
      if (c.policy != Policy::balanced) continue;
      // Guarantee 4 (balanced): bounded deferral while ACTIVE, full drain once none is.
      if (!any_active && !rp.deferred.empty())
        return where + "rank " + std::to_string(r) + " defers with no rank ACTIVE";
      for (auto i : rp.deferred)
        if (proposals[r].samples[i].age >= c.max_defer_rounds)
          return where + "rank " + std::to_string(r) + " defers a sample of age " +
                 std::to_string(proposals[r].samples[i].age);
    }
  }
  // Guarantee 2: every rank yields exactly the planned steps.
  for (std::size_t r = 0; r < run.ledgers.size(); ++r)
    if (run.ledgers[r].steps.size() != steps)
      return "rank " + std::to_string(r) + " yielded " +
             std::to_string(run.ledgers[r].steps.size()) + " steps, the plans hold " +
             std::to_string(steps);
  return "";
}

std::string describe(std::uint64_t seed, const LockstepScenario& s) {
  std::ostringstream out;
  out << "seed " << seed << " (ODBATCH_PROPERTY_SEED=" << seed
      << " ODBATCH_PROPERTY_SCENARIOS=1 reproduces it): W=" << s.shards.size()
      << " policy=" << to_string(s.config.policy) << " mode=" << to_string(s.config.budget_mode)
      << " warmup=" << to_string(s.config.warmup) << " B=" << s.config.token_budget
      << " window=" << s.config.window << " D=" << s.config.max_defer_rounds;
  return out.str();
}

}  // namespace

TEST_CASE("guarantees 1, 2, 4, 5, 6, 7 and 8 hold over random scenarios") {
  const std::uint64_t first = env_or("ODBATCH_PROPERTY_SEED", 1);
  const std::uint64_t count = env_or("ODBATCH_PROPERTY_SCENARIOS", 10000);
  LockstepOptions options;
  options.exchange = over_the_wire;
  options.record_rounds = true;
  std::uint64_t failures = 0, rounds = 0, samples = 0, balanced = 0;
  for (std::uint64_t seed = first; seed < first + count && failures < 5; ++seed) {
    const auto scenario = random_scenario(seed);
    balanced += scenario.config.policy == Policy::balanced;
    const auto run = run_lockstep(scenario, options);
    rounds += run.rounds_run;
    samples += run.expected_ids.size();
    std::string problem;
    if (!run.failure.empty()) {
      problem = run.failure;  // guarantee 1 (plans agree), 4 (round bound), or a divergence
    } else if (!run.finished) {
      problem = "the epoch did not end";
    } else if (auto rounds_problem = check_rounds(scenario, run); !rounds_problem.empty()) {
      problem = rounds_problem;
    } else if (auto audit = audit_epoch(run.expected_ids, run.ledgers, scenario.config);
               !audit.ok()) {
      problem = audit.summary();  // guarantees 2, 5, 6, 7
    } else {
      // Guarantee 8: the same scenario gives the same plans.
      const auto again = run_lockstep(scenario, options);
      for (std::size_t k = 0; k < run.rounds.size() && problem.empty(); ++k)
        if (!(again.rounds.size() == run.rounds.size() &&
              again.rounds[k].plan == run.rounds[k].plan))
          problem = "a second run planned round " + std::to_string(k) + " differently";
    }
    if (!problem.empty()) {
      ++failures;
      FAIL_CHECK(describe(seed, scenario) << "\n" << problem);
    }
  }
  MESSAGE(count << " scenarios (" << balanced << " balanced), " << samples << " samples, " << rounds
                << " rounds");
  CHECK(failures == 0);
}
