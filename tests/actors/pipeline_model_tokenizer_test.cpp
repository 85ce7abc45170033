// One rank, one epoch over real text and image records with a model's own tokenizer and chat
// template: a byte-level BPE tokenizer.json (Qwen2's configuration, trained on the dataset by the
// tokenizer oracle fixture) and Qwen2-VL's real Jinja template. Every record is emitted exactly
// once or rejected with a reason, every batch keeps the token budget, and each image's visual
// tokens sit between the template's vision tokens, as with the built-in ChatML preset.
#include <doctest/doctest.h>

#include <numeric>

#include "odbatch/core/ledger.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kTextRecords = 150;
constexpr std::size_t kImageRecords = 30;
const std::filesystem::path kTokenizerJson =
    std::filesystem::path(ODBATCH_TOKENIZER_ORACLE_DIR) / "qwen2.json";

test::VisionTokens hf_vision_tokens(const TokenizerOptions& options) {
  const auto tokenizer = load_hf_tokenizer(kTokenizerJson);
  const auto id_of = [&](const std::string& token) {
    const auto id = tokenizer->token_to_id(token);
    REQUIRE_MESSAGE(id.has_value(), token << " is not a token of " << kTokenizerJson);
    return static_cast<std::int32_t>(*id);
  };
  return {id_of(options.vision_start_piece), id_of(options.vision_end_piece),
          id_of(options.image_piece)};
}

TEST_CASE("an epoch with a tokenizer.json and Qwen2-VL's Jinja template: all accounted for") {
  test::require_dataset();
  const test::TempDir dir;
  const auto text_file = dir.path() / "text.jsonl";
  const auto image_file = dir.path() / "images.jsonl";
  const auto images = test::image_records(kImageRecords, /*wallpapers=*/false);
  test::write_jsonl(text_file, test::text_records(kTextRecords));
  test::write_jsonl(image_file, images);

  auto config = test::small_config({text_file, image_file});
  config.tokenizer.model = kTokenizerJson;
  auto& options = config.tokenizer.options;
  options.chat_template = ChatTemplate::jinja;
  options.template_file =
      std::filesystem::path(ODBATCH_CHAT_TEMPLATE_DIR) / "qwen2-vl-7b-instruct.jinja";
  options.eos_token = "<|im_end|>";
  options.template_date = "2024-07-26";
  const auto ledger_file = dir.path() / "ledger.jsonl";
  Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger_file});
  const std::uint64_t records = kTextRecords + kImageRecords;
  pipeline.start_epoch(0);
  const auto batches = test::drain(pipeline);
  REQUIRE(!batches.empty());

  test::BatchExpectations expect;
  expect.config = &pipeline.config();
  expect.vision = hf_vision_tokens(options);
  expect.file_starts = {0, kTextRecords};
  for (SampleId id = 0; id < records; ++id)
    expect.images_per_sample[id] = id < kTextRecords ? 0 : images[id - kTextRecords].images;
  auto rank = test::check_epoch(batches, expect);
  rank.rejected = test::read_ledger(ledger_file, 0).rejected;

  std::vector<SampleId> every_id(records);
  std::iota(every_id.begin(), every_id.end(), SampleId{0});
  const auto report = audit_epoch(every_id, std::span(&rank, 1), config.batching);
  INFO(report.summary());
  CHECK(report.ok());
  for (const auto& rejection : rank.rejected) CHECK(!rejection.reason.empty());
  CHECK(report.emitted + 5 >= records);
  std::size_t image_samples = 0;
  for (const auto& step : rank.steps)
    for (const auto& sample : step.samples) image_samples += sample.patches > 0;
  CHECK(image_samples + 3 >= kImageRecords);
  MESSAGE(report.summary() << "; " << image_samples << " samples with images");
}

}  // namespace
}  // namespace odbatch
