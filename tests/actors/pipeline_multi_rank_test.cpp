// Three ranks as threads of one process (the in-process collective), each with its own Pipeline
// over the same dataset: they yield the same number of batches, agree on every step's global
// totals, their loss scales sum to the world size, and together they emit or reject every
// record exactly once.
#include <doctest/doctest.h>

#include <exception>
#include <numeric>
#include <thread>

#include "odbatch/core/ledger.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::uint32_t kWorld = 3;

struct RankRun {
  std::vector<std::shared_ptr<const Batch>> batches;
  std::filesystem::path ledger;
  std::exception_ptr error;
};

TEST_CASE("three ranks in one process: aligned steps, agreed totals, every record once") {
  test::require_dataset();
  const test::TempDir dir;
  // Contiguous shards in file order: ranks 0 and 1 get short text records, rank 2 long ones and
  // images, so rank 2 needs many more groups and the others run IDLE steps meanwhile.
  auto records = test::text_records(120);
  const auto long_records = test::text_records(30, /*min_bytes=*/2400);
  const auto images = test::image_records(30, /*wallpapers=*/false);
  records.insert(records.end(), long_records.begin(), long_records.end());
  records.insert(records.end(), images.begin(), images.end());
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, records);
  auto config = test::small_config({file});
  config.source.shuffle = false;
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 16;
  config.tokenizer.workers = 1;
  config.flow.scheduler_threads = 1;

  const auto group = InprocGroup::create(kWorld);
  std::vector<RankRun> runs(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    runs[rank].ledger = dir.path() / ("ledger-" + std::to_string(rank) + ".jsonl");
    threads.emplace_back([&, rank] {
      auto& run = runs[rank];
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld),
                          PipelineOptions{run.ledger});
        pipeline.start_epoch(0);
        run.batches = test::drain(pipeline);
      } catch (...) {
        run.error = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    REQUIRE_MESSAGE(!runs[rank].error, test::exception_message(runs[rank].error));
  }

  const std::size_t steps = runs[0].batches.size();
  REQUIRE(steps > 0);
  for (const auto& run : runs) REQUIRE(run.batches.size() == steps);
  std::size_t idle = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    CAPTURE(step);
    const auto& first = runs[0].batches[step]->step_info();
    StepTotals actual;
    double scales = 0.0;
    for (const auto& run : runs) {
      const auto& info = run.batches[step]->step_info();
      CHECK(info.step == step);
      CHECK(info.round == first.round);
      CHECK(info.global == first.global);  // every rank sees the same totals
      actual.samples += info.samples;
      actual.tokens += info.tokens;
      actual.labels += info.labels;
      scales += info.loss_scale;
      idle += info.idle;
    }
    CHECK(first.global == actual);
    REQUIRE(first.global.labels > 0);  // a step idle on every rank is never emitted
    CHECK(scales == doctest::Approx(kWorld));
  }

  test::BatchExpectations expect;
  expect.config = &config;
  expect.vision = test::vision_tokens(config);
  expect.world_size = kWorld;
  expect.file_starts = {0};
  for (SampleId id = 0; id < records.size(); ++id)
    expect.images_per_sample[id] = records[id].images;
  std::vector<RankLedger> ledgers;
  for (const auto& run : runs) {
    ledgers.push_back(test::check_epoch(run.batches, expect));
    const auto written = test::read_ledger(run.ledger, 0);
    CHECK(written.end_steps == steps);
    ledgers.back().rejected = written.rejected;
  }
  std::vector<SampleId> every_id(records.size());
  std::iota(every_id.begin(), every_id.end(), SampleId{0});
  const auto report = audit_epoch(every_id, ledgers, config.batching);
  INFO(report.summary());
  CHECK(report.ok());
  CHECK(report.emitted + 10 >= records.size());
  CHECK(idle > 0);
  MESSAGE(report.summary() << "; " << idle << " IDLE batches over " << kWorld << " ranks");
}

}  // namespace
}  // namespace odbatch
