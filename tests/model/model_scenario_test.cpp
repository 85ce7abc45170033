// Reading model/scenarios.txt: malformed lines are rejected with their line and the reason.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "model_scenario.hpp"

using namespace odbatch;
using namespace odbatch::model;

namespace {

std::vector<ModelScenario> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_model_scenarios(in, "scenarios.txt");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a scenario line gives its budgets, shards and both outcome columns") {
  const auto all = parse(
      "# comment\n"
      "\n"
      "two  4 2 1 98  2,1/-/3  1,0  1,0\n");
  REQUIRE(all.size() == 1);
  const auto& s = all[0];
  CHECK(s.name == "two");
  CHECK(s.location == "scenarios.txt:3");
  CHECK(s.budget == 4);
  CHECK(s.window == 2);
  CHECK(s.max_defer == 1);
  CHECK(s.hold_pct == 98);
  REQUIRE(s.shards.size() == 3);
  CHECK(s.shards[0] == std::vector<std::uint32_t>{2, 1});
  CHECK(s.shards[1].empty());
  CHECK(s.shards[2] == std::vector<std::uint32_t>{3});
  CHECK(s.steps_per_round == std::vector<std::uint32_t>{1, 0});
  CHECK(s.deferred_per_round == std::vector<std::uint64_t>{1, 0});
  CHECK(s.total_steps() == 1);
}

TEST_CASE("lockstep scenarios number sample ids across shards and scale costs to tokens") {
  const auto s = parse("x 4 2 1 98 2,1/3 1,0 0,0\n")[0];
  const auto lockstep = lockstep_scenario(s, 10, 5);
  CHECK(lockstep.config.token_budget == 40);
  CHECK(lockstep.config.window == 2);
  CHECK(lockstep.config.max_defer_rounds == 1);
  CHECK(lockstep.config.seed == 5);
  REQUIRE(lockstep.shards.size() == 2);
  CHECK(lockstep.shards[0] == std::vector<SampleCost>{{0, 20, 20, 0}, {1, 10, 10, 0}});
  CHECK(lockstep.shards[1] == std::vector<SampleCost>{{2, 30, 30, 0}});
}

TEST_CASE("malformed scenario lines name their line and what is wrong") {
  CHECK(error_of("a 4 2 1 98 2/3 1,0\n") ==
        "scenarios.txt:1: expected 8 fields (name budget window max_defer hold_pct shards "
        "steps_per_round deferred_per_round), found 7");
  CHECK(error_of("\na 4 2 1 98 2,5/3 1,0 0,0\n") ==
        "scenarios.txt:2: rank 0 cost 5 is not within 1..4");
  CHECK(error_of("a 4 2 1 98 2,x/3 1,0 0,0\n") ==
        "scenarios.txt:1: rank 0 cost \"x\" is not a non-negative integer");
  CHECK(error_of("a 4 2 1 101 2/3 1,0 0,0\n") ==
        "scenarios.txt:1: hold_pct 101 is not within 1..100");
  CHECK(error_of("a 4 2 1 98 2 1,0 0,0\n") ==
        "scenarios.txt:1: 1 shards; the model takes 2..4 ranks");
  CHECK(error_of("a 4 2 1 98 -/- 0 0\n") == "scenarios.txt:1: 0 samples; the model takes 1..30");
  CHECK(error_of("a 4 2 1 98 2/3 1,0 0\n") ==
        "scenarios.txt:1: 2 step counts but 1 deferred counts");
  CHECK(error_of("a 4 2 1 98 2/3 1,1 0,0\n") ==
        "scenarios.txt:1: the last round (every rank DONE) must have 0 steps");
  CHECK(error_of("a 4 2 1 98 2/3 1,0 0,0\na 4 2 1 98 2/3 1,0 0,0\n") ==
        "scenarios.txt:2: scenario a is already defined at scenarios.txt:1");
}

TEST_CASE("a missing scenario file is an error naming it") {
  CHECK_THROWS_WITH(load_model_scenarios("/nonexistent/scenarios.txt"),
                    "/nonexistent/scenarios.txt: cannot be opened");
}
