// The command line as a user meets it: --version, help that shows defaults, range errors that say
// what is wanted, and `run`'s progress on a pipe (plain lines, per-epoch percentages) and its
// summary (the steps a --max-steps run took, apart from the batches the pipeline prefetched), on
// stdout and in its --json report, and --log-level.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"
#include "json_convention.hpp"
#include "test_skip.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;

const fs::path kData = ODBATCH_DATA_DIR;

bool data_built() {
  if (fs::exists(kData / "sft" / "mixed.jsonl")) return true;
  ::odbatch::test::report_skip("dataset", "the dataset is not built (tools/prepare-data.sh)");
  return false;
}

// The first `count` text records of the dataset, and a pipeline over them with a small window.
fs::path small_pipeline(int count) {
  std::ifstream in(kData / "sft" / "mixed.jsonl");
  std::string records, line;
  for (int kept = 0; kept < count && std::getline(in, line);)
    if (line.find("\"image") == std::string::npos) {
      records += line + "\n";
      ++kept;
    }
  const auto file = scratch().write("surface.jsonl", records);
  return scratch().write("surface.toml", source_and_tokenizer_toml(file, kData) +
                                             "[batching]\nwindow = 16\ntoken_budget = 1024\n");
}

}  // namespace

TEST_CASE("--version names the program and its version") {
  const auto run = run_cli("--version");
  CHECK(run.status == 0);
  CHECK(run.out.starts_with("odbatch "));
  CHECK(run.out.find('.') != std::string::npos);
}

TEST_CASE("help shows defaults, and a value out of range says what is wanted") {
  const auto help = run_cli("run --help");
  CHECK(help.out.find("--epochs UINT:AT LEAST 1=1") != std::string::npos);
  const auto zero = run_cli("run x.toml --epochs 0");
  CHECK(zero.status == 2);
  CHECK(zero.err.find("--epochs: must be at least 1, got 0") != std::string::npos);
  CHECK(zero.err.size() < 200);  // not CLI11's 300-digit bound
  CHECK(run_cli("run x.toml --max-steps two").err.find("expected a whole number") !=
        std::string::npos);
}

TEST_CASE("on a pipe, run's progress is plain lines per epoch, and --max-steps reports its steps") {
  if (!data_built()) return;
  const auto config = small_pipeline(60);
  const auto two_epochs = run_cli("run --epochs 2 " + shell_quoted(config));
  REQUIRE(two_epochs.status == 0);
  CHECK(two_epochs.err.find('\r') == std::string::npos);
  CHECK(two_epochs.err.find("odbatch run: epoch 0: 100.0% (60 of 60 records read)") !=
        std::string::npos);
  CHECK(two_epochs.err.find("odbatch run: epoch 1: 100.0% (60 of 60 records read)") !=
        std::string::npos);

  const auto summary = scratch().path("max-steps-summary.json");
  const auto stopped = run_cli("run --no-progress --max-steps 2 " + shell_quoted(config) +
                               " --json " + shell_quoted(summary));
  REQUIRE(stopped.status == 0);
  CHECK(stopped.err.empty());
  CHECK(stopped.out.find("steps: 2 taken;") != std::string::npos);
  odbatch::test::check_report_convention(read_file(summary), "run");
  CHECK(nlohmann::json::parse(read_file(summary))["steps_taken"] == 2);
}

TEST_CASE("--log-level info logs the epoch's start and end with the rank, in launched ranks too") {
  if (!data_built()) return;
  const auto config = small_pipeline(40);
  const auto one = run_cli("--log-level info run --no-progress " + shell_quoted(config));
  REQUIRE(one.status == 0);
  CHECK(one.err.find("[odbatch] [info] [rank 0] pipeline ready: 40 records in 1 file(s)") !=
        std::string::npos);
  CHECK(one.err.find("[odbatch] [info] [rank 0] epoch 0 started") != std::string::npos);
  CHECK(one.err.find("[odbatch] [info] [rank 0] epoch 0 ended after ") != std::string::npos);
  // After the subcommand too; the default level (warn) logs nothing on a good run.
  CHECK(run_cli("run --no-progress " + shell_quoted(config) + " --log-level error").err.empty());
  CHECK(run_cli("run --no-progress " + shell_quoted(config)).err.empty());

  const auto two =
      run_cli("--log-level info launch --nproc 2 -- " + shell_quoted(ODBATCH_CLI_PATH) +
              " run --no-progress " + shell_quoted(config));
  REQUIRE(two.status == 0);
  const std::string both = two.out + two.err;
  for (const std::string rank : {"0", "1"}) {
    CHECK(both.find("[odbatch] [info] [rank " + rank + "] epoch 0 ended after ") !=
          std::string::npos);
  }

  const auto bogus = run_cli("--log-level loud run " + shell_quoted(config));
  CHECK(bogus.status == 2);
  CHECK(bogus.err.find("--log-level: loud not in {trace,debug,info,warn,warning,error,off}") !=
        std::string::npos);
}
