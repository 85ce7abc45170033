// End-to-end tests of `odbatch plan`: the binary is run as a user would run it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "json_convention.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;
using nlohmann::json;

const std::string kExamples = ODBATCH_EXAMPLES_DIR;
const std::string kOneRound = kExamples + "/scenarios/one_round.json";
const std::string kUnevenShards = kExamples + "/scenarios/uneven_shards.json";

// Runs `plan` on a scenario written to a file and expects an input error: exit status 2, no
// report, and one line on stderr containing `expected`.
void check_input_error(const std::string& scenario, const std::string& expected,
                       const std::string& options = "") {
  const auto file = scratch().write("scenario.json", scenario);
  const auto run = run_cli("plan " + options + " " + shell_quoted(file.string()));
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK_MESSAGE(run.err.find(expected) != std::string::npos, run.err);
}

std::vector<std::uint64_t> sorted_ids(const json& step) {
  auto ids = step["sample_ids"].get<std::vector<std::uint64_t>>();
  std::sort(ids.begin(), ids.end());
  return ids;
}

using StepGroups = std::vector<std::vector<std::uint64_t>>;  // one sorted id list per rank

// Every step of a round as the groups it pairs across ranks.
std::set<StepGroups> steps_across_ranks(const json& round) {
  std::set<StepGroups> steps;
  for (std::size_t step = 0; step < round["steps"].get<std::size_t>(); ++step) {
    StepGroups groups;
    for (const auto& rank : round["ranks"]) groups.push_back(sorted_ids(rank["steps"][step]));
    steps.insert(groups);
  }
  return steps;
}

}  // namespace

TEST_CASE("plan of the bundled single round matches the hand-computed plan") {
  const auto run = run_cli("plan " + shell_quoted(kOneRound));
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  const json report = run.report();
  odbatch::test::check_report_convention(run.out, "plan");
  CHECK(report["kind"] == "round");
  CHECK(report["world_size"] == 3);
  CHECK(report["config"]["token_budget"] == 1000);
  REQUIRE(report["rounds"].size() == 1);
  const json& round = report["rounds"][0];

  // Ranks 0 and 1 are ACTIVE with two good groups each, rank 2 has one forced group: T = 2.
  CHECK(round["steps"] == 2);
  CHECK(round["epoch_over"] == false);
  CHECK(round["digest"].get<std::string>().starts_with("0x"));
  // Costliest groups pair up: {500, 490} with the 1200-token singleton and {300, 150}; then
  // {330, 325, 320} with the four 250s and the 80 split off rank 2's group.
  const std::set<StepGroups> expected{{{2, 4}, {14}, {20, 21}},
                                      {{0, 3, 5}, {10, 11, 12, 13}, {22}}};
  CHECK(steps_across_ranks(round) == expected);

  const json& ranks = round["ranks"];
  CHECK(ranks[0]["deferred"]["sample_ids"] == json({1, 6, 7}));
  CHECK(ranks[1]["deferred"]["sample_ids"] == json({15}));
  CHECK(ranks[2]["deferred"]["sample_ids"].empty());
  CHECK(ranks[2]["state"] == "DRAINING");
  for (std::size_t step = 0; step < 2; ++step) {
    const json& singleton = ranks[1]["steps"][step];
    const bool is_long = singleton["sample_ids"] == json({14});
    CHECK(singleton["over_budget"] == is_long);
    const json& totals = round["totals"][step];
    CHECK(totals["samples"] == (is_long ? 5 : 8));
    CHECK(totals["tokens"] == (is_long ? 2640 : 2050));
    double scale_sum = 0;
    for (const auto& rank : ranks) scale_sum += rank["steps"][step]["loss_scale"].get<double>();
    CHECK(scale_sum == doctest::Approx(3.0));
  }
}

TEST_CASE("--policy reference changes the plan") {
  const json balanced = run_cli("plan " + shell_quoted(kOneRound)).report();
  const auto run = run_cli("plan --policy reference " + shell_quoted(kOneRound));
  REQUIRE(run.status == 0);
  const json reference = run.report();
  CHECK(reference["config"]["policy"] == "reference");
  CHECK(reference["rounds"][0]["digest"] != balanced["rounds"][0]["digest"]);
  CHECK(steps_across_ranks(reference["rounds"][0]) != steps_across_ranks(balanced["rounds"][0]));
}

TEST_CASE("the bundled uneven-shards epoch runs to the end and passes its audit") {
  const auto run = run_cli("plan " + shell_quoted(kUnevenShards));
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  const json report = run.report();
  CHECK(report["kind"] == "epoch");
  CHECK(report["audit"]["ok"] == true);
  CHECK(report["audit"]["expected"] == 610);
  CHECK(report["audit"]["emitted"] == 610);
  CHECK(report["run"]["finished"] == true);

  const auto steps = report["run"]["steps_per_rank"].get<std::uint64_t>();
  std::uint64_t round_steps = 0;
  for (const auto& round : report["rounds"]) round_steps += round["steps"].get<std::uint64_t>();
  CHECK(round_steps == steps);
  CHECK(report["rounds"].back()["epoch_over"] == true);

  const std::vector<std::uint64_t> shard_sizes{300, 220, 90, 0};
  REQUIRE(report["ranks"].size() == 4);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(report["ranks"][r]["steps"] == steps);
    CHECK(report["ranks"][r]["emitted"] == shard_sizes[r]);
  }
  CHECK(report["ranks"][3]["idle_steps"] == steps);
}

TEST_CASE("every emitted id of an epoch appears exactly once across the rounds") {
  const json report = run_cli("plan " + shell_quoted(kUnevenShards)).report();
  std::vector<std::uint64_t> ids;
  for (const auto& round : report["rounds"])
    for (const auto& rank : round["ranks"])
      for (const auto& step : rank["steps"])
        for (const auto& id : step["sample_ids"]) ids.push_back(id.get<std::uint64_t>());
  std::sort(ids.begin(), ids.end());
  REQUIRE(ids.size() == 610);
  for (std::uint64_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == i);
}

TEST_CASE("an epoch reports rejected samples with their reasons") {
  const auto file = scratch().write("epoch.json", R"({
    "kind": "epoch", "config": {"token_budget": 1000, "window": 4},
    "shards": [[300, 0, {"tokens": 200, "labels": 0}, 500], [{"id": 99, "tokens": 120}]]})");
  const auto run = run_cli("plan " + shell_quoted(file.string()));
  REQUIRE(run.status == 0);
  const json report = run.report();
  CHECK(report["audit"]["ok"] == true);
  const json& rejected = report["ranks"][0]["rejected"];
  REQUIRE(rejected.size() == 2);
  CHECK(rejected[0]["id"] == 1);
  CHECK(rejected[0]["reason"] == "empty_sample");
  CHECK(rejected[1]["id"] == 2);
  CHECK(rejected[1]["reason"] == "no_labels");
  CHECK(report["ranks"][1]["emitted"] == 1);
}

TEST_CASE("--output writes the report to a file") {
  const auto output = scratch().path("report.json");
  const auto run =
      run_cli("plan --output " + shell_quoted(output.string()) + " " + shell_quoted(kOneRound));
  CHECK(run.status == 0);
  CHECK(run.out.empty());
  CHECK(json::parse(read_file(output))["rounds"][0]["steps"] == 2);
}

TEST_CASE("--summary prints one line per round and the epoch's outcome against LB and GMT") {
  const auto output = scratch().path("summary_report.json");
  const auto run = run_cli("plan --summary --output " + shell_quoted(output.string()) + " " +
                           shell_quoted(kUnevenShards));
  REQUIRE(run.status == 0);
  const json report = json::parse(read_file(output));
  const auto rounds = report["rounds"].size();
  std::istringstream lines(run.out);
  std::size_t round_lines = 0;
  bool epoch_over_line = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 5 && line.find_first_not_of(' ') < 5 && std::isdigit(line[4])) ++round_lines;
    epoch_over_line = epoch_over_line || line.ends_with("epoch over");
  }
  CHECK(round_lines == rounds);
  CHECK(epoch_over_line);
  CHECK(run.out.find("steps per rank " +
                     std::to_string(report["run"]["steps_per_rank"].get<int>()) +
                     " (offline bounds: per-shard LB ") != std::string::npos);
  CHECK(run.out.find("audit passed: 610 expected, 610 emitted") != std::string::npos);
}

TEST_CASE("config precedence: scenario < --config [batching] < --policy") {
  const auto toml =
      scratch().write("batching.toml", "[batching]\ntoken_budget = 2000\npolicy = \"reference\"\n");
  const json from_file =
      run_cli("plan --config " + shell_quoted(toml.string()) + " " + shell_quoted(kOneRound))
          .report();
  CHECK(from_file["config"]["token_budget"] == 2000);
  CHECK(from_file["config"]["window"] == 8);  // from the scenario
  CHECK(from_file["config"]["policy"] == "reference");
  const json flagged = run_cli("plan --policy balanced --config " + shell_quoted(toml.string()) +
                               " " + shell_quoted(kOneRound))
                           .report();
  CHECK(flagged["config"]["token_budget"] == 2000);
  CHECK(flagged["config"]["policy"] == "balanced");
}

TEST_CASE("a missing scenario file is an input error naming it") {
  const auto run = run_cli("plan /nonexistent/scenario.json");
  CHECK(run.status == 2);
  CHECK(run.err.find("/nonexistent/scenario.json: cannot read") != std::string::npos);
}

TEST_CASE("a JSON syntax error names line and column") {
  check_input_error("{\n  \"kind\": \"round\",\n  x\n}\n", "scenario.json:3:3: JSON syntax error");
}

TEST_CASE("an unknown config key fails naming the key") {
  check_input_error(R"({"kind": "round", "config": {"windw": 8}, "ranks": []})",
                    "config.windw: unknown key");
}

TEST_CASE("a bad config value fails naming the key") {
  check_input_error(R"({"kind": "round", "config": {"window": -3}, "ranks": []})",
                    "config.window: expected a positive integer, got -3");
  check_input_error(R"({"kind": "round", "config": {"hold_pct": 150}, "ranks": []})",
                    "config.hold_pct: must be between 0 and 100");
  check_input_error(R"({"kind": "round", "config": {"policy": "fast"}, "ranks": []})",
                    "config.policy: expected one of balanced, reference; got \"fast\"");
}

TEST_CASE("a bad --config file fails naming file, line and key") {
  const auto toml = scratch().write("bad.toml", "[batching]\n\nwarmup = \"fast\"\n");
  check_input_error(R"({"kind": "epoch", "shards": [[10]]})",
                    "bad.toml:3:10: batching.warmup: expected one of none, short, linear",
                    "--config " + shell_quoted(toml.string()));
}

TEST_CASE("missing and ill-typed fields are named by their JSON path") {
  check_input_error(R"({"kind": "round", "ranks": [{"state": "ACTIVE", "samples": [10]},
                       {"samples": [10]}]})",
                    "ranks[1].state: missing");
  check_input_error(R"({"kind": "round", "ranks": [{"state": "ACTIVE",
                       "samples": [10, {"tokens": "900"}]}]})",
                    "ranks[0].samples[1].tokens: expected a positive integer, got \"900\"");
  check_input_error(R"({"kind": "round", "ranks": [{"state": "active", "samples": []}]})",
                    "ranks[0].state: expected one of ACTIVE, DRAINING, DONE");
  check_input_error(R"({"kind": "epoch", "shards": [[10], [{"tokens": 5, "labels": 6}]]})",
                    "shards[1][0].labels: expected at most tokens (5), got 6");
  check_input_error(R"({"kind": "epoch", "shards": [[10], [{"tokens": 5, "age": 1}]]})",
                    "shards[1][0].age: unknown field");
  check_input_error(R"({"kind": "batch"})", "kind: expected \"round\" or \"epoch\"");
}

TEST_CASE("a zero-token window sample is an input error") {
  check_input_error(R"({"kind": "round", "ranks": [{"state": "ACTIVE",
                       "samples": [{"tokens": 0}]}]})",
                    "ranks[0].samples[0].tokens: expected a positive integer, got 0");
}

TEST_CASE("duplicate sample ids are an input error naming both places") {
  check_input_error(R"({"kind": "epoch", "shards": [[10, 20], [{"id": 1, "tokens": 5}]]})",
                    "shards[1][0]: id 1 is also used by shards[0][1]");
}

TEST_CASE("an inconsistent proposal is reported naming rank and field") {
  check_input_error(R"({"kind": "round", "ranks": [{"state": "ACTIVE", "samples": [10]},
                       {"state": "DONE", "samples": [10]}]})",
                    "ranks[1]: invalid proposal (state): DONE with 1 samples");
  check_input_error(R"({"kind": "round", "ranks": [{"state": "ACTIVE", "entered": 3,
                       "samples": [10]}]})",
                    "ranks[0]: invalid proposal (entered)");
}

TEST_CASE("usage errors exit with status 2") {
  CHECK(run_cli("plan --policy fastest " + shell_quoted(kOneRound)).status == 2);
  CHECK(run_cli("plan").status == 2);
  CHECK(run_cli("").status == 2);
}
