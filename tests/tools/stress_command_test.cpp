// `odbatch stress`: the bounded fault matrix, one run per fault kind (the input faults included: a
// rank configured apart, hostile records) with three ranks as processes over loopback, with
// timeouts ten heartbeats long so that a loaded machine causes no false abort.
#include <doctest/doctest.h>

#include "cli_test_support.hpp"
#include "json_convention.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

fs::path write_stress_config(const fs::path& dir) {
  const auto data = fs::path(ODBATCH_DATA_DIR);
  test::write_jsonl(dir / "records.jsonl", test::text_records(400));
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", data) << "[images]\nworkers = 1\n"
       << "[batching]\ntoken_budget = 1024\nmax_seq_len = 1024\nwindow = 16\nseed = 5\n"
       << "[pipeline]\nscheduler_threads = 2\nround_timeout_ms = 3000\n"
       << "[distributed]\nheartbeat_interval_ms = 200\npeer_timeout_ms = 2000\n"
       << "store_timeout_ms = 3000\nflight_recorder_dir = \"" << dir.string() << "\"\n";
  return test::scratch().write("stress.toml", toml.str());
}

// No ';' in test names: ctest's test discovery splits them there.
TEST_CASE(
    "every kind of fault fails every rank within its bound naming the cause, none loses a sample") {
  test::require_dataset();
  const auto dir = test::scratch().path("stress");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto config = write_stress_config(dir);
  const auto report_file = dir / "stress.json";
  const auto run = test::run_cli(
      "stress " + test::shell_quoted(config) + " --runs 10 --ranks 3 --each --seed 2 --dir " +
      test::shell_quoted(dir / "runs") + " --json " + test::shell_quoted(report_file));
  MESSAGE(run.out);
  CHECK_MESSAGE(run.status == 0, run.out << run.err);
  const auto report = nlohmann::json::parse(test::read_file(report_file));
  test::check_report_convention(test::read_file(report_file), "stress");
  CHECK(report["runs"] == 10);
  CHECK(report["hangs"] == 0);
  CHECK(report["lost_samples"] == 0);
  CHECK(report["aborts_over_bound"] == 0);
  CHECK(report["unnamed_causes"] == 0);
  CHECK(report["successes_beside_failure"] == 0);
  CHECK(report["audit_problems"] == 0);
  CHECK(report["runs_with_problems"] == 0);
  for (const char* kind :
       {"kill", "stop", "delay", "corrupt", "truncate", "wrong_version", "store_unreachable"}) {
    CAPTURE(kind);
    REQUIRE(report["by_fault"].contains(kind));
    CHECK(report["by_fault"][kind]["injected"] == 1);
    CHECK(report["by_fault"][kind]["max_abort_ms"].is_number());
  }
  // A rank configured apart fails every rank at round 0; hostile records are each rejected and
  // the run succeeds with a clean audit.
  for (const char* kind : {"config_divergence", "hostile_records"}) {
    CAPTURE(kind);
    REQUIRE(report["by_fault"].contains(kind));
    CHECK(report["by_fault"][kind]["runs"] == 1);
    CHECK(report["by_fault"][kind]["problems"] == 0);
  }
  CHECK(report["by_fault"]["none"]["runs"] == 1);
}

TEST_CASE("stress refuses unusable options") {
  CHECK(test::run_cli("stress /nonexistent.toml --runs 2").status == 2);
  const auto dir = test::scratch().path("stress_options");
  fs::create_directories(dir);
  const auto config = write_stress_config(dir);
  const auto unknown = test::run_cli("stress " + test::shell_quoted(config) + " --faults explode");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("unknown fault kind 'explode'") != std::string::npos);
}

TEST_CASE("stress refuses a config whose [source] it cannot vary for a rank") {
  test::require_dataset();
  const auto dir = test::scratch().path("stress_dotted");
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The same config with its [source] table written as dotted keys: a [source] table added for
  // the rank configured apart would define it twice.
  std::string toml = test::read_file(write_stress_config(dir));
  const auto table = toml.find("[source]\nfiles = ");
  REQUIRE(table != std::string::npos);
  toml.replace(table, std::string("[source]\nfiles = ").size(), "source.files = ");
  toml.replace(toml.find("\nimage_root = "), std::string("\nimage_root = ").size(),
               "\nsource.image_root = ");
  const auto config = test::scratch().write("stress_dotted.toml", toml);
  const auto run = test::run_cli("stress " + test::shell_quoted(config) +
                                 " --runs 2 --ranks 2 --faults config_divergence --dir " +
                                 test::shell_quoted(dir / "runs"));
  CHECK_MESSAGE(run.status == 2, run.out << run.err);
  CHECK_MESSAGE(run.err.find("cannot vary [source]") != std::string::npos, run.err);
}

}  // namespace
}  // namespace odbatch
