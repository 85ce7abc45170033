// One rank, one epoch over real records of the dataset (text and images, in two files): every
// record is emitted exactly once or rejected with a reason that names it, every batch keeps the
// token budget, and the trainer's view of each batch (layout, labels, images, step info, loss
// scale) is consistent, in the padded and in the packed layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "odbatch/core/ledger.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using test::BatchExpectations;

constexpr std::size_t kTextRecords = 200;
constexpr std::size_t kImageRecords = 40;

// Returns the number of batches flagged over budget.
std::size_t run_epoch_and_check(BatchLayout layout, BudgetMode budget_mode,
                                std::uint32_t token_budget = 4096) {
  test::require_dataset();
  const test::TempDir dir;
  const auto text_file = dir.path() / "text.jsonl";
  const auto image_file = dir.path() / "images.jsonl";
  const auto text = test::text_records(kTextRecords);
  const auto images = test::image_records(kImageRecords, /*wallpapers=*/true);
  test::write_jsonl(text_file, text);
  test::write_jsonl(image_file, images);

  auto config = test::small_config({text_file, image_file});
  config.flow.layout = layout;
  config.batching.budget_mode = budget_mode;
  config.batching.token_budget = token_budget;
  config.images.workers = 2;
  const auto ledger_file = dir.path() / "ledger.jsonl";
  Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger_file});
  const std::uint64_t records = kTextRecords + kImageRecords;
  REQUIRE(pipeline.dataset_records() == records);
  pipeline.start_epoch(0);
  CHECK(pipeline.shard_records() == records);
  const auto batches = test::drain(pipeline);
  REQUIRE(!batches.empty());
  CHECK(pipeline.next_batch() == nullptr);  // the end stays the end

  BatchExpectations expect;
  expect.config = &pipeline.config();
  expect.vision = test::vision_tokens(config);
  expect.file_starts = {0, kTextRecords};
  for (SampleId id = 0; id < records; ++id)
    expect.images_per_sample[id] = id < kTextRecords ? 0 : images[id - kTextRecords].images;
  auto rank = test::check_epoch(batches, expect);

  // The ledger lists the same steps, and every rejection.
  const auto ledger = test::read_ledger(ledger_file, 0);
  REQUIRE(ledger.steps.size() == batches.size());
  for (std::size_t i = 0; i < batches.size(); ++i)
    CHECK(ledger.steps[i] == batches[i]->step_info().sample_ids);
  CHECK(ledger.end_steps == batches.size());
  rank.rejected = ledger.rejected;

  std::vector<SampleId> every_id(records);
  std::iota(every_id.begin(), every_id.end(), SampleId{0});
  const auto report = audit_epoch(every_id, std::span(&rank, 1), config.batching);
  INFO(report.summary());
  CHECK(report.ok());

  for (const auto& rejection : ledger.rejected) {
    CAPTURE(rejection.detail);
    CHECK(!rejection.reason.empty());
    const bool text_record = rejection.id < kTextRecords;
    const auto where =
        (text_record ? text_file : image_file).string() + ":" +
        std::to_string(text_record ? rejection.id + 1 : rejection.id - kTextRecords + 1) + ":";
    CHECK(rejection.detail.find(where) != std::string::npos);
  }
  // Real records are nearly all good: a pipeline that rejects what it should emit fails here.
  CHECK(report.emitted + 5 >= records);
  std::size_t image_samples = 0;
  for (const auto& step : rank.steps)
    for (const auto& sample : step.samples) image_samples += sample.patches > 0;
  CHECK(image_samples + 5 >= kImageRecords);

  const auto stats = pipeline.stats();
  CHECK(stats.records_read == records);
  CHECK(stats.samples_emitted == report.emitted);
  CHECK(stats.samples_rejected == report.rejected);
  CHECK(stats.batches == batches.size());
  CHECK(stats.idle_batches == 0);
  MESSAGE(to_string(layout) << ": " << report.summary() << "; " << image_samples
                            << " samples with images; padding efficiency "
                            << stats.padding_efficiency() << "; " << stats.image_buffers_reused
                            << " images decoded into reused buffers");
  return static_cast<std::size_t>(std::count_if(
      batches.begin(), batches.end(), [](const auto& b) { return b->step_info().over_budget; }));
}

TEST_CASE("an epoch of real text and image records in padded batches: all accounted for") {
  run_epoch_and_check(BatchLayout::padded, BudgetMode::padded);
}

TEST_CASE("an epoch of real text and image records in packed batches: all accounted for") {
  run_epoch_and_check(BatchLayout::packed, BudgetMode::packed);
}

TEST_CASE("samples over a small token budget run alone, flagged over budget") {
  // check_batch compares every batch's flag with its rows; some real records exceed 256 tokens.
  CHECK(run_epoch_and_check(BatchLayout::padded, BudgetMode::padded, 256) > 0);
}

}  // namespace
}  // namespace odbatch
