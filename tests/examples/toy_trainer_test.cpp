// The toy trainer under `odbatch launch`: every rank runs as many steps as every other, and each
// step's allreduce on the trainer's own Gloo context sums to the pipeline's global token total
// (the trainer exits non-zero otherwise).
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

#include "cli_test_support.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

TEST_CASE("three ranks run equal step counts with one allreduce per step on their own context") {
  test::require_dataset();
  const auto data = fs::path(ODBATCH_DATA_DIR);
  const auto dir = test::scratch().path("toy_trainer");
  fs::create_directories(dir);
  // Uneven shards: 301 records over 3 ranks, with images, so that ranks differ in work.
  auto records = test::text_records(280);
  const auto images = test::image_records(21, /*wallpapers=*/false);
  records.insert(records.end(), images.begin(), images.end());
  test::write_jsonl(dir / "records.jsonl", records);
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", data)
       << "[images]\nworkers = 1\nmax_pixels = 200704\n"
       << "[batching]\ntoken_budget = 2048\nmax_seq_len = 2048\nwindow = 16\nseed = 3\n"
       << "[pipeline]\nscheduler_threads = 2\n";
  const auto config = test::scratch().write("toy_trainer.toml", toml.str());

  const auto run =
      test::run_cli("launch --nproc 3 -- " + test::shell_quoted(ODBATCH_TOY_TRAINER_PATH) + " " +
                    test::shell_quoted(config));
  REQUIRE_MESSAGE(run.status == 0, run.out << run.err);
  // Lines "rank R: S steps (I idle), T tokens, ...".
  std::set<std::string> ranks, step_counts;
  std::istringstream lines(run.out);
  for (std::string text; std::getline(lines, text);) {
    std::istringstream line(text);
    std::string word, rank, steps, unit;
    if (line >> word >> rank >> steps >> unit && word == "rank" && unit == "steps") {
      ranks.insert(rank.substr(0, rank.find(':')));
      step_counts.insert(steps);
    }
  }
  CHECK(ranks == std::set<std::string>{"0", "1", "2"});
  CHECK_MESSAGE(step_counts.size() == 1, run.out);
  CHECK(std::stoul(*step_counts.begin()) > 5);
}

}  // namespace
}  // namespace odbatch
