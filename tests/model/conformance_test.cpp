// The C++ core against the spin model: both run the scenarios of model/scenarios.txt and must
// produce the outcomes recorded there (the model asserts them in every interleaving it explores),
// so neither the model nor the core can drift from the other silently.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "model_scenario.hpp"
#include "odbatch/core/grouping.hpp"
#include "odbatch/core/ledger.hpp"

using namespace odbatch;
using namespace odbatch::model;

namespace {

const std::vector<ModelScenario>& scenarios() {
  static const auto all = load_model_scenarios(ODBATCH_MODEL_SCENARIOS);
  return all;
}

LockstepResult run(const ModelScenario& s, std::uint32_t tokens_per_cost, std::uint64_t seed) {
  LockstepOptions options;
  options.record_rounds = true;
  return run_lockstep(lockstep_scenario(s, tokens_per_cost, seed), options);
}

struct Outcome {
  std::vector<std::uint32_t> steps_per_round;
  std::vector<std::uint64_t> deferred_per_round;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

Outcome outcome_of(const LockstepResult& result) {
  Outcome o;
  for (const auto& round : result.rounds) {
    o.steps_per_round.push_back(round.plan.steps);
    std::uint64_t deferred = 0;
    for (const auto& rank : round.plan.ranks) deferred += rank.deferred.size();
    o.deferred_per_round.push_back(deferred);
  }
  return o;
}

std::string describe(const Outcome& o) {
  std::string text = "steps";
  for (auto t : o.steps_per_round) text += " " + std::to_string(t);
  text += ", deferred";
  for (auto d : o.deferred_per_round) text += " " + std::to_string(d);
  return text;
}

// What a scenario makes the plan function do, read off the core's recorded rounds.
struct Exercised {
  bool multi_sample_group = false;
  bool split = false;
  bool deferral = false;
  bool forced_group = false;
  bool idle_step = false;
  bool draining_while_active = false;
  bool done_while_others_hold_samples = false;
};

void note_round(const LockstepRound& round, const BatchingConfig& config, Exercised& seen) {
  bool any_active = false, any_draining = false, any_done = false, any_sample = false;
  for (std::size_t r = 0; r < round.proposals.size(); ++r) {
    const auto& proposal = round.proposals[r];
    const auto& rank = round.plan.ranks[r];
    any_active = any_active || proposal.state == RankState::active;
    any_draining = any_draining || proposal.state == RankState::draining;
    any_done = any_done || proposal.state == RankState::done;
    any_sample = any_sample || !proposal.samples.empty();
    const auto groups = group_balanced(proposal.samples, config);
    std::size_t real_steps = 0;
    for (const auto& step : rank.steps) {
      real_steps += step.idle() ? 0 : 1;
      seen.idle_step = seen.idle_step || step.idle();
      seen.multi_sample_group = seen.multi_sample_group || step.count >= 2;
    }
    seen.split = seen.split || real_steps > groups.size();
    seen.deferral = seen.deferral || !rank.deferred.empty();
    for (const auto& g : groups) seen.forced_group = seen.forced_group || g.forced;
  }
  seen.draining_while_active = seen.draining_while_active || (any_active && any_draining);
  seen.done_while_others_hold_samples =
      seen.done_while_others_hold_samples || (any_done && any_sample);
}

}  // namespace

TEST_CASE("the core reproduces the model's step counts, deferrals and termination round") {
  REQUIRE(!scenarios().empty());
  for (const auto& s : scenarios()) {
    INFO("scenario ", s.name, " (", s.location, ")");
    const auto result = run(s, kTokensPerCost, 0);
    REQUIRE_MESSAGE(result.failure.empty(), result.failure);
    REQUIRE(result.finished);
    CHECK(result.rounds_run == s.steps_per_round.size());
    const Outcome expected{s.steps_per_round, s.deferred_per_round};
    const Outcome actual = outcome_of(result);
    CHECK_MESSAGE(actual == expected, "core: ", describe(actual), "; model: ", describe(expected));
  }
}

TEST_CASE("the core emits every sample of a model scenario exactly once, with equal step counts") {
  for (const auto& s : scenarios()) {
    INFO("scenario ", s.name, " (", s.location, ")");
    const auto scenario = lockstep_scenario(s, kTokensPerCost, 0);
    const auto result = run_lockstep(scenario);
    REQUIRE(result.finished);
    const auto report = audit_epoch(result.expected_ids, result.ledgers, scenario.config);
    CHECK_MESSAGE(report.ok(), report.summary());
    CHECK(report.rejected == 0);
    for (const auto& ledger : result.ledgers) CHECK(ledger.steps.size() == s.total_steps());
  }
}

TEST_CASE("a model scenario's outcome does not depend on the token scale or the step order seed") {
  // The model works on abstract costs and leaves the step permutation out; both must be
  // irrelevant to step counts, deferrals and the termination round.
  for (const auto& s : scenarios()) {
    INFO("scenario ", s.name, " (", s.location, ")");
    const auto reference = outcome_of(run(s, kTokensPerCost, 0));
    for (const std::uint32_t scale : {1u, 7u, 1000u})
      for (const std::uint64_t seed : {1ull, 0x9e3779b97f4a7c15ull}) {
        CAPTURE(scale);
        CAPTURE(seed);
        CHECK(outcome_of(run(s, scale, seed)) == reference);
      }
  }
}

TEST_CASE("the model's scenarios exercise every rule of the plan for W = 2 and W = 3") {
  for (const std::size_t world : {2u, 3u}) {
    CAPTURE(world);
    Exercised seen;
    for (const auto& s : scenarios()) {
      if (s.shards.size() != world) continue;
      const auto scenario = lockstep_scenario(s, kTokensPerCost, 0);
      for (const auto& round : run(s, kTokensPerCost, 0).rounds)
        note_round(round, scenario.config, seen);
    }
    CHECK(seen.multi_sample_group);
    CHECK(seen.split);
    CHECK(seen.deferral);
    CHECK(seen.forced_group);
    CHECK(seen.idle_step);
    CHECK(seen.draining_while_active);
    CHECK(seen.done_while_others_hold_samples);
  }
}
