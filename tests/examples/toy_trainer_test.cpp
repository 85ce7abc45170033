// The toy trainer under `odbatch launch`: every rank runs as many steps as every other, and each
// step's allreduce on the trainer's own Gloo context sums to the pipeline's global token total
// (the trainer exits non-zero otherwise); stopped at max_steps, every rank departs cleanly.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

#include "cli_test_support.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

// The config of a 3-rank run over uneven shards: 301 records, with images, so ranks differ in work.
fs::path toy_trainer_config() {
  const auto data = fs::path(ODBATCH_DATA_DIR);
  const auto dir = test::scratch().path("toy_trainer");
  fs::create_directories(dir);
  auto records = test::text_records(280);
  const auto images = test::image_records(21, /*wallpapers=*/false);
  records.insert(records.end(), images.begin(), images.end());
  test::write_jsonl(dir / "records.jsonl", records);
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", data)
       << "[images]\nworkers = 1\nmax_pixels = 200704\n"
       << "[batching]\ntoken_budget = 2048\nmax_seq_len = 2048\nwindow = 16\nseed = 3\n"
       << "[pipeline]\nscheduler_threads = 2\n";
  return test::scratch().write("toy_trainer.toml", toml.str());
}

struct StepReport {
  std::set<std::string> ranks, step_counts;
};

// Lines "rank R: S steps (I idle), T tokens, ...".
StepReport step_reports(const std::string& out) {
  StepReport report;
  std::istringstream lines(out);
  for (std::string text; std::getline(lines, text);) {
    std::istringstream line(text);
    std::string word, rank, steps, unit;
    if (line >> word >> rank >> steps >> unit && word == "rank" && unit == "steps") {
      report.ranks.insert(rank.substr(0, rank.find(':')));
      report.step_counts.insert(steps);
    }
  }
  return report;
}

TEST_CASE("three ranks run equal step counts with one allreduce per step on their own context") {
  test::require_dataset();
  const auto run = test::run_cli("launch --nproc 3 --no-prefix -- " +
                                 test::shell_quoted(ODBATCH_TOY_TRAINER_PATH) + " " +
                                 test::shell_quoted(toy_trainer_config()));
  REQUIRE_MESSAGE(run.status == 0, run.out << run.err);
  const auto report = step_reports(run.out);
  CHECK(report.ranks == std::set<std::string>{"0", "1", "2"});
  CHECK_MESSAGE(report.step_counts.size() == 1, run.out);
  CHECK(std::stoul(*report.step_counts.begin()) > 5);
  CHECK_MESSAGE(run.err.find("abort hook") == std::string::npos, run.err);
}

TEST_CASE("three ranks stopping at max_steps depart without a failure or an abort hook") {
  test::require_dataset();
  const auto run = test::run_cli("launch --nproc 3 --no-prefix -- " +
                                 test::shell_quoted(ODBATCH_TOY_TRAINER_PATH) + " " +
                                 test::shell_quoted(toy_trainer_config()) + " --max-steps 4");
  REQUIRE_MESSAGE(run.status == 0, run.out << run.err);
  const auto report = step_reports(run.out);
  CHECK(report.ranks == std::set<std::string>{"0", "1", "2"});
  CHECK_MESSAGE(report.step_counts == std::set<std::string>{"4"}, run.out);
  CHECK_MESSAGE(run.err.find("abort hook") == std::string::npos, run.err);
}

}  // namespace
}  // namespace odbatch
