// Stopping the pipeline: destroying it mid-epoch (with the emitter blocked on a full batch queue)
// returns promptly, a single rank may restart an unfinished epoch and gets the same batches as a
// fresh pipeline, abort() fails pending and later next_batch() calls with its reason, and a
// missing model or dataset file fails the constructor naming the path. Leaks show under ASan.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using Clock = std::chrono::steady_clock;

// Generous for sanitizer builds on a loaded machine; a hang takes far longer.
constexpr auto kPrompt = std::chrono::seconds(5);

struct Records {
  test::TempDir dir;
  std::filesystem::path file = dir.path() / "records.jsonl";

  explicit Records(std::size_t count) {
    test::require_dataset();
    test::write_jsonl(file, test::text_records(count));
  }
};

PipelineConfig many_small_batches(const std::filesystem::path& file) {
  auto config = test::small_config({file});
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 32;
  config.flow.prefetch = 1;
  return config;
}

// Waits until `done` holds, failing the test after a while.
template <class Condition>
void wait_until(Condition done, const char* what) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!done()) {
    REQUIRE_MESSAGE(Clock::now() < deadline, "timed out waiting until " << what);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string failure_of_next_batch(Pipeline& pipeline) {
  try {
    pipeline.next_batch();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "next_batch() did not throw";
}

TEST_CASE("destroying a pipeline mid-epoch, its emitter blocked on the full queue, is prompt") {
  const Records records(200);
  const auto config = many_small_batches(records.file);
  auto pipeline = std::make_unique<Pipeline>(config);
  pipeline->start_epoch(0);
  REQUIRE(pipeline->next_batch());
  REQUIRE(pipeline->next_batch());
  // Two taken, one waiting in the queue (prefetch 1), one more collated: the emitter is blocked
  // pushing it (it counts a batch before pushing).
  wait_until([&] { return pipeline->stats().batches >= 4; }, "the emitter fills the queue");
  const auto start = Clock::now();
  pipeline.reset();
  CHECK(Clock::now() - start < kPrompt);
}

TEST_CASE("restarting an unfinished epoch on one rank yields the same batches as a fresh run") {
  const Records records(200);
  const auto config = many_small_batches(records.file);
  Pipeline fresh(config);
  fresh.start_epoch(0);
  const auto expected = test::batch_digests(test::drain(fresh));
  REQUIRE(expected.size() > 4);

  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  for (int i = 0; i < 3; ++i) REQUIRE(pipeline.next_batch());
  pipeline.start_epoch(0);
  CHECK(test::batch_digests(test::drain(pipeline)) == expected);
  // And again, abandoning it before its first batch.
  pipeline.start_epoch(0);
  pipeline.start_epoch(0);
  CHECK(test::batch_digests(test::drain(pipeline)) == expected);
}

TEST_CASE("abort() fails a waiting and every later next_batch() with its reason") {
  const Records records(200);
  auto config = many_small_batches(records.file);
  // Slow workers: the first round takes long enough to be waiting in next_batch().
  config.flow.worker_jitter_us = 20'000;
  config.tokenizer.workers = 1;
  // A whole window's first round (32 records, 640 ms) is still running at the abort; a short
  // warm-up round of 2 records could deliver a batch before it.
  config.batching.warmup = Warmup::none;
  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  std::thread trainer_side([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pipeline.abort("the trainer lost its GPU");
  });
  const auto start = Clock::now();
  const auto pending = failure_of_next_batch(pipeline);
  trainer_side.join();
  CHECK(Clock::now() - start < kPrompt);
  CHECK(pending.find("the trainer lost its GPU") != std::string::npos);
  CHECK(failure_of_next_batch(pipeline).find("the trainer lost its GPU") != std::string::npos);

  // A single rank may start over after an abort.
  config.flow.worker_jitter_us = 0;
  Pipeline reference(config);
  reference.start_epoch(0);
  const auto expected = test::batch_digests(test::drain(reference));
  pipeline.start_epoch(0);
  CHECK(test::batch_digests(test::drain(pipeline)) == expected);
}

TEST_CASE("the trainer's abort hook is called once, with the reason") {
  const Records records(200);
  const auto config = many_small_batches(records.file);
  std::vector<std::string> reasons;
  PipelineOptions options;
  options.on_abort = [&](const std::string& reason) { reasons.push_back(reason); };
  Pipeline pipeline(config, DistEnv::single(), options);
  pipeline.start_epoch(0);
  REQUIRE(pipeline.next_batch());
  pipeline.abort("the loss went NaN");
  pipeline.abort("and again");
  CHECK(failure_of_next_batch(pipeline).find("the loss went NaN") != std::string::npos);
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].find("the loss went NaN") != std::string::npos);
}

TEST_CASE("abort() after some batches fails the next next_batch()") {
  const Records records(200);
  const auto config = many_small_batches(records.file);
  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  REQUIRE(pipeline.next_batch());
  pipeline.abort("evaluation failed");
  CHECK(failure_of_next_batch(pipeline).find("evaluation failed") != std::string::npos);
}

TEST_CASE("a missing tokenizer model or dataset file fails the constructor, naming the path") {
  const Records records(10);
  auto missing_model = test::small_config({records.file});
  missing_model.tokenizer.model = records.dir.path() / "no-such.model";
  CHECK_THROWS_WITH(Pipeline{missing_model},
                    doctest::Contains(missing_model.tokenizer.model.string().c_str()));

  const auto missing_file = records.dir.path() / "no-such.jsonl";
  auto missing_data = test::small_config({missing_file});
  CHECK_THROWS_WITH(Pipeline{missing_data}, doctest::Contains(missing_file.string().c_str()));
}

}  // namespace
}  // namespace odbatch
