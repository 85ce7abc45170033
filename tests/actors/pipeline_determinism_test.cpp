// The batch sequence is a function of data, config, seed and world size only: pool sizes, credit
// capacities, scheduler threads and random delays in the workers (pipeline.worker_jitter_us)
// change the timing of every stage, never a byte of a batch. Another seed changes the sequence.
#include <doctest/doctest.h>

#include <algorithm>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

struct Timing {
  const char* name;
  std::uint32_t tokenizer_workers;
  std::uint32_t image_workers;
  std::uint32_t reader_capacity;
  std::uint32_t scheduler_threads;
  std::uint32_t jitter_us;
};

constexpr Timing kTimings[] = {
    {"1 tokenizer, 1 decoder, capacity 8, 1 thread, jitter", 1, 1, 8, 1, 2000},
    {"3 tokenizers, 2 decoders, capacity 256, 4 threads, jitter", 3, 2, 256, 4, 2000},
    {"2 tokenizers, 1 decoder, capacity 32, 2 threads, no jitter", 2, 1, 32, 2, 0},
};

std::vector<std::uint64_t> run_epoch(PipelineConfig config, const Timing& timing) {
  config.tokenizer.workers = timing.tokenizer_workers;
  config.images.workers = timing.image_workers;
  config.flow.reader_capacity = timing.reader_capacity;
  config.flow.scheduler_threads = timing.scheduler_threads;
  config.flow.worker_jitter_us = timing.jitter_us;
  Pipeline pipeline(config);
  pipeline.start_epoch(3);
  return test::batch_digests(test::drain(pipeline));
}

// The first step where two sequences differ, for the failure message.
std::size_t first_difference(const std::vector<std::uint64_t>& a,
                             const std::vector<std::uint64_t>& b) {
  const auto [in_a, in_b] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(in_a - a.begin());
}

TEST_CASE("same data, config and seed: identical batches whatever the pools, threads and delays") {
  test::require_dataset();
  const test::TempDir dir;
  auto records = test::text_records(150);
  const auto images = test::image_records(30, /*wallpapers=*/false);
  records.insert(records.end(), images.begin(), images.end());
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, records);
  auto config = test::small_config({file});
  config.batching.window = 32;

  const auto reference = run_epoch(config, kTimings[0]);
  REQUIRE(reference.size() > 5);
  for (const auto& timing : kTimings) {
    INFO("timing: " << timing.name);
    const auto digests = run_epoch(config, timing);
    INFO("first different step: " << first_difference(reference, digests) << " of "
                                  << reference.size());
    CHECK(digests == reference);
  }

  config.batching.seed = 2;
  const auto other_seed = run_epoch(config, kTimings[2]);
  CHECK(other_seed != reference);
}

}  // namespace
}  // namespace odbatch
