// End-to-end tests of `odbatch audit`: the binary is run on ledgers written by hand (each breaking
// one guarantee) and on the ledger of a real pipeline run over part of the bundled dataset.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "json_convention.hpp"
#include "test_skip.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;
using nlohmann::json;
using Ids = std::vector<std::uint64_t>;

// Ledger lines as runtime's LedgerWriter writes them. The hand-written ledgers keep file order
// (shuffle = false) with a contiguous split, so rank r of W over N records holds the ids
// r * N / W ... (r + 1) * N / W - 1 when W divides N.
std::string header(std::uint32_t rank, std::uint32_t world_size, std::uint64_t record_count = 6) {
  return json{{"kind", "epoch"},
              {"epoch", 0},
              {"rank", rank},
              {"world_size", world_size},
              {"record_count", record_count},
              {"dataset_fingerprint", "0x00000000000004d2"},
              {"seed", 1},
              {"shuffle", false},
              {"split", "contiguous"}}
             .dump() +
         "\n";
}

std::string step(std::uint64_t number, const Ids& ids) {
  return json{{"kind", "step"},  {"epoch", 0},          {"step", number},
              {"round", number}, {"idle", ids.empty()}, {"ids", ids}}
             .dump() +
         "\n";
}

std::string rejected(std::uint64_t id) {
  return json{{"kind", "rejected"},
              {"epoch", 0},
              {"id", id},
              {"reason", "corrupt"},
              {"detail", "data.jsonl:" + std::to_string(id + 1) + ": image a.jpg: bad"}}
             .dump() +
         "\n";
}

std::string end(std::uint64_t steps) {
  return json{{"kind", "end"}, {"epoch", 0}, {"steps", steps}}.dump() + "\n";
}

std::string departed(std::uint64_t steps) {
  return json{{"kind", "departed"}, {"epoch", 0}, {"steps", steps}}.dump() + "\n";
}

// Two ranks over six records: rank 0 holds ids 0-2, rank 1 ids 3-5 (4 rejected, one IDLE step).
std::string clean_rank0() {
  return header(0, 2) + step(0, {0, 1}) + step(1, {2}) + end(2);
}
std::string clean_rank1() {
  return header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {}) + end(2);
}

CliRun audit(const std::string& rank0, const std::string& rank1, const std::string& options = "") {
  const auto a = scratch().write("r0.jsonl", rank0);
  const auto b = scratch().write("r1.jsonl", rank1);
  return run_cli("audit " + options + " " + shell_quoted(a) + " " + shell_quoted(b));
}

// A failed audit: status 1, and the summary names the problem's kind and `detail`.
void check_problem(const CliRun& run, const std::string& kind, const std::string& detail) {
  CHECK(run.status == 1);
  CHECK_MESSAGE(run.out.find("audit FAILED") != std::string::npos, run.out);
  CHECK_MESSAGE(run.out.find(kind + ": ") != std::string::npos, run.out);
  CHECK_MESSAGE(run.out.find(detail) != std::string::npos, run.out);
}

// A ledger that is no ledger: status 2, nothing on stdout, one line on stderr with `expected`.
void check_malformed(const CliRun& run, const std::string& expected) {
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK_MESSAGE(run.err.find(expected) != std::string::npos, run.err);
}

}  // namespace

TEST_CASE("audit passes clean ledgers and reports their counts") {
  const auto report = scratch().path("clean.json");
  const auto run = audit(clean_rank0(), clean_rank1(), "--json " + shell_quoted(report));
  CHECK_MESSAGE(run.status == 0, run.out, run.err);
  CHECK(run.err.empty());
  CHECK(run.out.find("audit passed") != std::string::npos);
  CHECK_MESSAGE(
      run.out.find("6 ids expected, 5 emitted, 1 rejected (corrupt 1)") != std::string::npos,
      run.out);
  CHECK(run.out.find("not checked: token budgets") != std::string::npos);

  const json j = json::parse(read_file(report));
  odbatch::test::check_report_convention(read_file(report), "audit");
  CHECK(j["ok"] == true);
  REQUIRE(j["epochs"].size() == 1);
  const json& epoch = j["epochs"][0];
  CHECK(epoch["world_size"] == 2);
  CHECK(epoch["expected"] == 6);
  CHECK(epoch["emitted"] == 5);
  CHECK(epoch["rejected"] == 1);
  CHECK(epoch["rejected_by_reason"] == json{{"corrupt", 1}});
  CHECK(epoch["ranks"][1]["steps"] == 2);
  CHECK(epoch["findings"].empty());
}

TEST_CASE("audit fails an id emitted twice") {
  const auto run = audit(header(0, 2) + step(0, {0, 1}) + step(1, {2, 1}) + end(2), clean_rank1());
  check_problem(run, "duplicated", "id 1 emitted on rank 0 and emitted on rank 0");
}

TEST_CASE("audit fails a lost id") {
  const auto run = audit(header(0, 2) + step(0, {0, 1}) + step(1, {}) + end(2), clean_rank1());
  check_problem(run, "missing", "id 2 neither emitted nor rejected");
}

TEST_CASE("audit fails an id both rejected and emitted, and an id outside the shards") {
  const auto run =
      audit(clean_rank0(), header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {4, 9}) + end(2));
  check_problem(run, "duplicated", "id 4 ");
  check_problem(run, "unknown", "id 9 emitted on rank 1 is not part of the epoch");
}

TEST_CASE("audit fails a rank with one step fewer") {
  const auto run = audit(clean_rank0(), header(1, 2) + step(0, {3, 5}) + rejected(4) + end(1));
  check_problem(run, "step_count_mismatch",
                "ranks yielded different numbers of steps: rank 0 2, rank 1 1");
}

TEST_CASE("audit fails an end line that disagrees with the steps listed, and a missing end") {
  auto run =
      audit(clean_rank0(), header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {}) + end(3));
  check_problem(run, "end_mismatch", "r1.jsonl:5: the end line says 3 steps");
  run = audit(clean_rank0(), header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {}));
  check_problem(run, "no_end", "(the epoch did not finish)");
}

TEST_CASE("audit names the ranks whose ledgers are missing") {
  // World size 3 over six records: ranks 0, 1, 2 hold ids 0-1, 2-3, 4-5; rank 2's file is absent.
  const auto report = scratch().path("missing.json");
  const auto run =
      audit(header(0, 3) + step(0, {0, 1}) + end(1),
            header(1, 3) + step(0, {2}) + rejected(3) + end(1), "--json " + shell_quoted(report));
  check_problem(run, "missing_rank", "no ledger of epoch 0 for rank 2 (world size 3)");
  // Only the present ranks' ids are expected, so the missing rank does not drown the report.
  const json j = json::parse(read_file(report));
  CHECK(j["ok"] == false);
  CHECK(j["epochs"][0]["missing_ranks"] == json::array({2}));
  CHECK(j["epochs"][0]["expected"] == 4);
  CHECK(j["epochs"][0]["problems"] == 1);
}

TEST_CASE("audit rejects truncated and malformed ledger lines with file:line") {
  const std::string complete = clean_rank0();
  const std::string truncated = complete.substr(0, complete.size() - 12);
  check_malformed(audit(truncated, clean_rank1()), "r0.jsonl:4: malformed ledger line");
  check_malformed(audit(header(0, 2) + "{\"kind\": \"step\", \"epoch\": 0, \"step\": 0, \"round\": "
                                       "0, \"idle\": false, \"ids\": [0, -1]}\n",
                        clean_rank1()),
                  "r0.jsonl:2: ids[1]: expected a non-negative integer, got -1");
  check_malformed(audit(step(0, {0}) + clean_rank0(), clean_rank1()),
                  "r0.jsonl:1: epoch: a step line of epoch 0 before that epoch's header line");
  check_malformed(audit(clean_rank0(), header(2, 2)),
                  "r1.jsonl:1: rank: expected an integer at most 1");
  check_malformed(audit("", clean_rank1()), "r0.jsonl: empty");
  const auto run = run_cli("audit " + shell_quoted(scratch().path("no-such-ledger.jsonl")));
  check_malformed(run, "no-such-ledger.jsonl: cannot read");
}

TEST_CASE("a ledger of a real pipeline run passes the audit against its config") {
  const fs::path data = ODBATCH_DATA_DIR;
  const fs::path records = data / "dirty" / "dirty.jsonl";
  const fs::path model = data / "tokenizer" / "odbatch-unigram-8k.model";
  if (!fs::exists(records) || !fs::exists(model) || !fs::exists(data / "sft" / "mixed.jsonl")) {
    ODBATCH_SKIP_TEST("dataset", data.string()
                                     << " is not built (tools/prepare-data.sh builds it)");
  }
  // The example pipeline over the dataset's dirty subset: good and bad records (corrupt and
  // missing images, malformed records), so the ledger holds rejections as well as steps.
  const std::string subset_text = read_file(records);
  const fs::path subset = scratch().write("subset.jsonl", subset_text);
  int record_count = 0;  // lines holding anything besides whitespace
  std::istringstream subset_lines(subset_text);
  for (std::string record; std::getline(subset_lines, record);)
    if (record.find_first_not_of(" \t\r") != std::string::npos) ++record_count;
  std::istringstream example(read_file(fs::path(ODBATCH_EXAMPLES_DIR) / "pipeline.toml"));
  std::string config, line;
  int replaced = 0;
  auto replace = [&](const std::string& key, const std::string& value) {
    if (line.rfind(key + " =", 0) != 0) return false;
    line = key + " = " + value;
    ++replaced;
    return true;
  };
  while (std::getline(example, line)) {
    replace("files", "[\"" + subset.string() + "\"]") ||
        replace("image_root", "\"" + (data / "dirty" / "images").string() + "\"") ||
        replace("model", "\"" + model.string() + "\"") || replace("window", "32");
    config += line + "\n";
  }
  REQUIRE(replaced == 4);
  const fs::path toml = scratch().write("pipeline.toml", config);
  const fs::path ledger = scratch().path("run-ledger.jsonl");

  const auto pipeline_run = run_cli("run --epochs 2 --no-progress --ledger " +
                                    shell_quoted(ledger) + " " + shell_quoted(toml));
  REQUIRE_MESSAGE(pipeline_run.status == 0, pipeline_run.err);

  const fs::path report = scratch().path("run-audit.json");
  const auto run = run_cli("audit " + shell_quoted(ledger) + " --config " + shell_quoted(toml) +
                           " --json " + shell_quoted(report));
  CHECK_MESSAGE(run.status == 0, run.out, run.err);
  const json j = json::parse(read_file(report));
  CHECK(j["ok"] == true);
  REQUIRE(j["epochs"].size() == 2);
  for (const auto& epoch : j["epochs"]) {
    CHECK(epoch["expected"] == record_count);
    CHECK(epoch["emitted"].get<int>() + epoch["rejected"].get<int>() == record_count);
    CHECK(epoch["rejected"].get<int>() > 0);
    CHECK(epoch["ranks"][0]["steps"] == epoch["ranks"][0]["end_steps"]);
  }

  // The example's own config names the whole dataset, not this subset.
  const auto mismatch = run_cli("audit " + shell_quoted(ledger) + " --config " +
                                shell_quoted(fs::path(ODBATCH_EXAMPLES_DIR) / "pipeline.toml"));
  check_problem(mismatch, "config_mismatch", "has dataset fingerprint");
}

TEST_CASE("audit passes ranks that departed at one step: steps prepared after it do not count") {
  const auto report = scratch().path("departed.json");
  // Both ranks departed after step 0; rank 1's pipeline had prepared step 1 already.
  const auto run = audit(header(0, 2) + step(0, {0, 1}) + departed(1),
                         header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {2}) + departed(1),
                         "--json " + shell_quoted(report));
  CHECK_MESSAGE(run.status == 0, run.out, run.err);
  CHECK_MESSAGE(
      run.out.find("6 ids expected, 4 emitted, 1 rejected (corrupt 1), 1 not reached (the ranks "
                   "departed)") != std::string::npos,
      run.out);
  CHECK(run.out.find("steps before the departure: rank 0 1 rank 1 1") != std::string::npos);
  const json epoch = json::parse(read_file(report))["epochs"][0];
  CHECK(epoch["departed"] == true);
  CHECK(epoch["not_reached"] == 1);
  CHECK(epoch["ranks"][1]["steps"] == 1);
  CHECK(epoch["ranks"][1]["steps_listed"] == 2);
}

TEST_CASE("audit passes ranks that departed after an end line the pipeline wrote ahead of them") {
  const auto run = audit(clean_rank0() + departed(2),
                         header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {}) + departed(2));
  CHECK_MESSAGE(run.status == 0, run.out, run.err);
  CHECK_MESSAGE(run.out.find("6 ids expected, 5 emitted, 1 rejected (corrupt 1), 0 not reached") !=
                    std::string::npos,
                run.out);
  // The end line comes once the last step is prepared: ranks that departed before taking it
  // left the rest not reached.
  const auto early = audit(clean_rank0() + departed(1), clean_rank1() + departed(1));
  CHECK_MESSAGE(early.status == 0, early.out, early.err);
  CHECK_MESSAGE(early.out.find("1 not reached") != std::string::npos, early.out);
  // A departure after more steps than the epoch has is a line too many.
  check_problem(audit(clean_rank0() + departed(3), clean_rank1()), "after_end",
                "r0.jsonl:5: a departed line after the epoch's end line");
}

TEST_CASE("audit fails ranks that departed at different steps, or one that departed alone") {
  auto run = audit(header(0, 2) + step(0, {0, 1}) + step(1, {2}) + departed(2),
                   header(1, 2) + step(0, {3, 5}) + rejected(4) + step(1, {}) + departed(1));
  check_problem(run, "departure_mismatch",
                "rank 1 departed after 1 steps, rank 0 departed after 2 steps");
  run = audit(clean_rank0(), header(1, 2) + step(0, {3, 5}) + rejected(4) + departed(1));
  check_problem(run, "departure_mismatch", "rank 0 ended after 2 steps, rank 1 departed after 1");
  run = audit(header(0, 2) + step(0, {0, 1}) + departed(2), clean_rank1());
  check_problem(run, "departure_mismatch", "the departure says 2 steps, rank 0's ledger lists 1");
  // A departure never hides a duplicate.
  run = audit(header(0, 2) + step(0, {0, 0}) + departed(1),
              header(1, 2) + step(0, {3, 5}) + departed(1));
  check_problem(run, "duplicated", "id 0 ");
}
