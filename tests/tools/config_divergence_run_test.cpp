// Ranks as processes whose pipeline files differ in what decides batches: before, every rank
// exited 0 having emitted some samples twice and others never; now every rank fails at round 0,
// naming the setting and the ranks. Each rank reads config-$RANK.toml under `odbatch launch`.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

// A pipeline over `records` with `source_extra` appended to its [source] table.
std::string pipeline_toml(const fs::path& records, const std::string& source_extra) {
  const auto data = fs::path(ODBATCH_DATA_DIR);
  return "[source]\nfiles = [\"" + records.string() + "\"]\nimage_root = \"" +
         (data / "images").string() + "\"\n" + source_extra + "[tokenizer]\nmodel = \"" +
         (data / "tokenizer/odbatch-unigram-8k.model").string() + "\"\nworkers = 1\n" +
         "[batching]\ntoken_budget = 2048\nmax_seq_len = 1024\nwindow = 16\nseed = 3\n"
         "[pipeline]\nscheduler_threads = 1\nround_timeout_ms = 60000\n";
}

// Runs three ranks, rank 2 on `odd_toml`, the others on `toml`; returns launch's run.
test::CliRun run_three(const std::string& name, const std::string& toml,
                       const std::string& odd_toml) {
  for (int rank = 0; rank < 3; ++rank)
    test::scratch().write(name + "-" + std::to_string(rank) + ".toml", rank == 2 ? odd_toml : toml);
  const auto config = test::scratch().path(name + "-");
  return test::run_cli("launch --nproc 3 -- sh -c '" + std::string(ODBATCH_CLI_PATH) +
                           " run --no-progress " + config.string() + "$RANK.toml'",
                       /*deadline_seconds=*/120);
}

void check_named_failure(const test::CliRun& run, const std::string& setting) {
  CHECK(run.status != 0);
  CHECK(run.status != test::kTimedOutStatus);
  const std::string output = run.out + run.err;
  for (int rank = 0; rank < 3; ++rank) {
    CAPTURE(rank);
    const auto named = "rank " + std::to_string(rank) + ", epoch 0 round 0: rank 2 diverges " +
                       "(settings): the ranks are configured differently: " + setting + ": ";
    CHECK_MESSAGE(output.find(named) != std::string::npos, output);
  }
  CHECK_MESSAGE(output.find(" on rank 2, ") != std::string::npos, output);
}

TEST_CASE("three processes, rank 2 without shuffling: every rank fails at round 0 naming it") {
  test::require_dataset();
  const auto records = test::scratch().path("divergent.jsonl");
  test::write_jsonl(records, test::text_records(300));
  const auto run =
      run_three("shuffle", pipeline_toml(records, ""), pipeline_toml(records, "shuffle = false\n"));
  check_named_failure(run, "source.shuffle");
}

TEST_CASE("three processes, rank 2 on another dataset file: every rank fails at round 0") {
  test::require_dataset();
  const auto records = test::scratch().path("dataset-a.jsonl");
  const auto other = test::scratch().path("dataset-b.jsonl");
  const auto text = test::text_records(300);
  test::write_jsonl(records, text);
  test::write_jsonl(other, {text.begin(), text.end() - 1});
  const auto run = run_three("dataset", pipeline_toml(records, ""), pipeline_toml(other, ""));
  check_named_failure(run, "dataset");
}

}  // namespace
}  // namespace odbatch
