// The lookahead: the first round's batches wait until `lookahead` samples beyond the first round's
// admission are preprocessed, so that the second round's admission is under way before the
// trainer starts. When the first batch is out, the tokenizer has therefore finished at least that
// many of these text-only records (or all of them), whatever the workers' timing; the batches
// themselves do not depend on it. Unset, the lookahead is the second round's admission.
#include <doctest/doctest.h>

#include <optional>

#include "odbatch/core/warmup.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kRecords = 400;

struct FirstBatch {
  std::uint64_t tokenized_by_then = 0;
  std::vector<std::uint64_t> digests;  // of the whole epoch
};

FirstBatch run(const std::filesystem::path& file, std::optional<std::uint32_t> lookahead) {
  auto config = test::small_config({file});
  config.flow.lookahead = lookahead;
  // Slow, uneven workers: without the gate the first round would be planned and collated long
  // before the lookahead is tokenized.
  config.flow.worker_jitter_us = 1000;
  Pipeline pipeline(config, DistEnv::single());
  pipeline.start_epoch(0);
  FirstBatch result;
  auto first = pipeline.next_batch();
  REQUIRE(first != nullptr);
  result.tokenized_by_then = pipeline.stats().tokenizer.items;
  result.digests.push_back(test::batch_digest(*first));
  for (const auto& batch : test::drain(pipeline))
    result.digests.push_back(test::batch_digest(*batch));
  return result;
}

TEST_CASE("the first batch waits for the lookahead, and the batches do not depend on it") {
  test::require_dataset();
  const test::TempDir dir;
  const auto file = dir.path() / "text.jsonl";
  test::write_jsonl(file, test::text_records(kRecords));
  const auto batching = test::small_config({file}).batching;
  const std::uint32_t first_round = admission_threshold(batching, 0);
  const std::uint32_t second_round = admission_threshold(batching, 1);

  const auto none = run(file, 0);
  CHECK(none.tokenized_by_then >= first_round);
  const auto some = run(file, 150);
  CHECK(some.tokenized_by_then >= first_round + 150);
  const auto unset = run(file, std::nullopt);
  CHECK(unset.tokenized_by_then >= first_round + second_round);
  // A lookahead beyond the dataset waits for all of it, and still ends.
  const auto all = run(file, 100'000);
  CHECK(all.tokenized_by_then == kRecords);

  CHECK(some.digests == none.digests);
  CHECK(unset.digests == none.digests);
  CHECK(all.digests == none.digests);
}

TEST_CASE("unset, the lookahead is sized from the window and the warm-up") {
  auto config = test::small_config({"unused.jsonl"});
  config.batching.window = 4096;
  config.batching.warmup = Warmup::short_ramp;
  // The reader may run a whole window ahead; the first round waits only for the next one's
  // admission: window/8 behind round 0's window/16, then a whole window once the ramp is over.
  CHECK(reader_lookahead(config) == 4096);
  CHECK(first_round_lookahead(config, 0) == 512);
  CHECK(first_round_lookahead(config, 2) == 2048);
  CHECK(first_round_lookahead(config, 3) == 4096);
  config.batching.warmup = Warmup::none;
  CHECK(first_round_lookahead(config, 0) == 4096);
  config.flow.lookahead = 7;
  CHECK(reader_lookahead(config) == 7);
  CHECK(first_round_lookahead(config, 0) == 7);
  CHECK(first_round_lookahead(config, 5) == 7);
}

}  // namespace
}  // namespace odbatch
