// The lookahead: the first round's batches wait until `lookahead` samples beyond the first window
// are preprocessed, so that the second round's admission is under way before the trainer starts.
// When the first batch is out, the tokenizer has therefore finished at least window + lookahead
// of these text-only records (or all of them), whatever the workers' timing; the batches
// themselves do not depend on it.
#include <doctest/doctest.h>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kRecords = 400;

struct FirstBatch {
  std::uint64_t tokenized_by_then = 0;
  std::vector<std::uint64_t> digests;  // of the whole epoch
};

FirstBatch run(const std::filesystem::path& file, std::uint32_t lookahead) {
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
  const std::uint32_t window = test::small_config({file}).batching.window;

  const auto none = run(file, 0);
  CHECK(none.tokenized_by_then >= window);
  const auto some = run(file, 150);
  CHECK(some.tokenized_by_then >= window + 150);
  // A lookahead beyond the dataset waits for all of it, and still ends.
  const auto all = run(file, 100'000);
  CHECK(all.tokenized_by_then == kRecords);

  CHECK(some.digests == none.digests);
  CHECK(all.digests == none.digests);
}

TEST_CASE("the lookahead defaults to the window") {
  auto config = test::small_config({"unused.jsonl"});
  CHECK(effective_lookahead(config) == config.batching.window);
  config.flow.lookahead = 7;
  CHECK(effective_lookahead(config) == 7);
}

}  // namespace
}  // namespace odbatch
