// The C++ trainer example: (1) with the pipeline's loss scales, the gradient averaged over W ranks
// (IDLE ranks included, with weight 0) equals the gradient of one process over the same step's
// samples with a per-target mean loss; (2) run as processes under `odbatch launch`, its loss goes
// down over an epoch of the real dataset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>
#include <thread>

#include "cli_test_support.hpp"
#include "next_token_model.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;
using odbatch_example::NextTokenModel;

constexpr std::uint32_t kWorld = 3;

struct RankRun {
  std::vector<std::shared_ptr<const Batch>> batches;
  std::uint32_t vocab = 0;
  std::exception_ptr error;
};

// Ranks 0 and 1 get short text records, rank 2 long ones and images (contiguous shards in file
// order), so the other ranks run IDLE steps while rank 2 catches up.
PipelineConfig uneven_config(const fs::path& dir) {
  auto records = test::text_records(120);
  const auto long_records = test::text_records(30, /*min_bytes=*/2400);
  const auto images = test::image_records(30, /*wallpapers=*/false);
  records.insert(records.end(), long_records.begin(), long_records.end());
  records.insert(records.end(), images.begin(), images.end());
  test::write_jsonl(dir / "records.jsonl", records);
  auto config = test::small_config({dir / "records.jsonl"});
  config.source.shuffle = false;
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 16;
  config.tokenizer.workers = 1;
  config.flow.scheduler_threads = 1;
  return config;
}

std::vector<RankRun> run_ranks(const PipelineConfig& config) {
  const auto group = InprocGroup::create(kWorld);
  std::vector<RankRun> runs(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld));
        runs[rank].vocab = pipeline.vocab_size();
        pipeline.start_epoch(0);
        runs[rank].batches = test::drain(pipeline);
      } catch (...) {
        runs[rank].error = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  return runs;
}

// The largest difference between two gradients, relative to the larger one's largest value.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double difference = 0.0, scale = 1e-12;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference = std::max(difference, static_cast<double>(std::abs(a[i] - b[i])));
    scale =
        std::max({scale, static_cast<double>(std::abs(a[i])), static_cast<double>(std::abs(b[i]))});
  }
  return difference / scale;
}

TEST_CASE("the ranks' loss-scaled gradients average to one process's per-target mean gradient") {
  test::require_dataset();
  const test::TempDir dir;
  const auto runs = run_ranks(uneven_config(dir.path()));
  for (const auto& run : runs) REQUIRE_MESSAGE(!run.error, test::exception_message(run.error));
  const NextTokenModel model({runs[0].vocab, 8, 64}, /*seed=*/7);
  const std::size_t steps = runs[0].batches.size();
  REQUIRE(steps > 3);

  std::size_t idle_ranks = 0, steps_where_mean_of_means_differs = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    CAPTURE(step);
    std::vector<float> averaged(model.parameter_count()), one_process(model.parameter_count()),
        mean_of_means(model.parameter_count());
    std::uint64_t all_targets = 0;
    for (const auto& run : runs) all_targets += NextTokenModel::count_targets(*run.batches[step]);
    for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
      const auto& batch = *runs[rank].batches[step];
      const auto& info = batch.step_info();
      const auto targets = NextTokenModel::count_targets(batch);
      if (info.idle) {
        ++idle_ranks;
        all_targets -= targets;  // the dummy token is no sample's
        CHECK(info.loss_scale == 0.0);
      } else {
        CHECK(targets == info.labels);
      }
      // What each rank's trainer does: its mean loss times its loss scale, then sum / W.
      model.accumulate(batch,
                       static_cast<float>(info.loss_scale / static_cast<double>(targets)) /
                           static_cast<float>(kWorld),
                       averaged);
      if (!info.idle)
        model.accumulate(batch, 1.0f / static_cast<float>(targets * kWorld), mean_of_means);
    }
    for (const auto& run : runs)
      if (!run.batches[step]->step_info().idle)
        model.accumulate(*run.batches[step], 1.0f / static_cast<float>(all_targets), one_process);
    CHECK(relative_difference(averaged, one_process) < 1e-4);
    // Without the loss scales (a mean of the ranks' means) the gradient is a different one:
    // the comparison above can tell them apart.
    if (relative_difference(mean_of_means, one_process) > 1e-2) ++steps_where_mean_of_means_differs;
  }
  CHECK(idle_ranks > 0);
  CHECK(steps_where_mean_of_means_differs > 0);
}

// The config of a 2-rank run over 800 text records of the real dataset.
fs::path trainer_config() {
  const auto dir = test::scratch().path("cpp_trainer");
  fs::create_directories(dir);
  test::write_jsonl(dir / "records.jsonl", test::text_records(800));
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", fs::path(ODBATCH_DATA_DIR))
       << "[batching]\ntoken_budget = 1024\nmax_seq_len = 1024\nwindow = 32\nseed = 5\n"
       << "[pipeline]\nscheduler_threads = 2\n";
  return test::scratch().write("cpp_trainer.toml", toml.str());
}

// The losses of lines "epoch E step S loss X samples N/M", in order.
std::vector<double> logged_losses(const std::string& out) {
  std::vector<double> losses;
  std::istringstream lines(out);
  for (std::string text; std::getline(lines, text);) {
    std::istringstream line(text);
    std::string epoch_word, step_word, loss_word;
    std::uint64_t epoch = 0, step = 0;
    double loss = 0.0;
    if (line >> epoch_word >> epoch >> step_word >> step >> loss_word >> loss &&
        epoch_word == "epoch" && loss_word == "loss")
      losses.push_back(loss);
  }
  return losses;
}

TEST_CASE("two trainer processes: the loss goes down over an epoch of the real dataset") {
  test::require_dataset();
  const auto run = test::run_cli("launch --nproc 2 --no-prefix -- " +
                                 test::shell_quoted(ODBATCH_CPP_TRAINER_PATH) + " " +
                                 test::shell_quoted(trainer_config()) + " --log-every 4");
  REQUIRE_MESSAGE(run.status == 0, run.out << run.err);
  const auto losses = logged_losses(run.out);
  INFO(run.out);
  REQUIRE(losses.size() >= 4);
  CHECK(losses.back() < losses.front() - 0.5);
  CHECK(run.out.find("rank 0: epoch 0:") != std::string::npos);
  CHECK(run.out.find("rank 1: epoch 0:") != std::string::npos);
}

// Log lines "epoch E step S ..." from step `from` on.
std::vector<std::string> log_lines_from(const std::string& out, std::uint64_t from) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string text; std::getline(in, text);) {
    std::istringstream line(text);
    std::string epoch_word, step_word;
    std::uint64_t epoch = 0, step = 0;
    if (line >> epoch_word >> epoch >> step_word >> step && epoch_word == "epoch" && step >= from)
      lines.push_back(text);
  }
  return lines;
}

TEST_CASE("a trainer saved mid-epoch and resumed logs the losses of an uninterrupted run") {
  test::require_dataset();
  const auto config = trainer_config();
  const auto state = test::scratch().path("cpp_trainer.ckpt");
  const auto trainer = [&](const std::string& arguments) {
    return test::run_cli("launch --nproc 2 --no-prefix -- " +
                         test::shell_quoted(ODBATCH_CPP_TRAINER_PATH) + " " +
                         test::shell_quoted(config) + " --log-every 4 " + arguments);
  };
  const auto whole = trainer("");
  REQUIRE_MESSAGE(whole.status == 0, whole.err);
  const auto saved = trainer("--save-state-at 10 --state " + test::shell_quoted(state));
  REQUIRE_MESSAGE(saved.status == 0, saved.err);
  const auto resumed = trainer("--resume " + test::shell_quoted(state));
  REQUIRE_MESSAGE(resumed.status == 0, resumed.err);
  // The interval ending at step 12 began before the cut; every later line is a full interval.
  const auto expected = log_lines_from(whole.out, 16);
  REQUIRE(expected.size() >= 3);
  CHECK(log_lines_from(resumed.out, 16) == expected);
}

}  // namespace
}  // namespace odbatch
