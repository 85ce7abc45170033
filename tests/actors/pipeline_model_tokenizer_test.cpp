// One rank, one epoch over real text and image records with a model's own tokenizer and chat
// template: a byte-level BPE tokenizer.json (Qwen2's configuration, trained on the dataset by the
// tokenizer oracle fixture) and Qwen2-VL's real Jinja template. Every record is emitted exactly
// once or rejected with a reason, every batch keeps the token budget, and each image's visual
// tokens sit between the template's vision tokens, as with the built-in ChatML preset.
#include <doctest/doctest.h>

#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "odbatch/core/ledger.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
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

// The small config over `files` with the trained Qwen2 tokenizer.json and a Qwen chat template.
PipelineConfig qwen_config(const std::vector<std::filesystem::path>& files,
                           const std::string& template_file) {
  auto config = test::small_config(files);
  config.tokenizer.model = kTokenizerJson;
  auto& options = config.tokenizer.options;
  options.chat_template = ChatTemplate::jinja;
  options.template_file = std::filesystem::path(ODBATCH_CHAT_TEMPLATE_DIR) / template_file;
  options.eos_token = "<|im_end|>";
  options.template_date = "2024-07-26";
  return config;
}

TEST_CASE("an epoch with a tokenizer.json and Qwen2-VL's Jinja template: all accounted for") {
  test::require_dataset();
  const test::TempDir dir;
  const auto text_file = dir.path() / "text.jsonl";
  const auto image_file = dir.path() / "images.jsonl";
  const auto images = test::image_records(kImageRecords, /*wallpapers=*/false);
  test::write_jsonl(text_file, test::text_records(kTextRecords));
  test::write_jsonl(image_file, images);

  const auto config = qwen_config({text_file, image_file}, "qwen2-vl-7b-instruct.jinja");
  const auto& options = config.tokenizer.options;
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

// Tool-use records (tools, tool calls and results, chat_template_kwargs) through the pipeline:
// every one reaches the tokenizer whole, so each row equals the record tokenized on its own.
TEST_CASE("an epoch of tool-use records with Qwen2.5's template and template variables") {
  const auto records_file = std::filesystem::path(ODBATCH_TEXT_TEST_DATA_DIR) / "tool_use.jsonl";
  auto config = qwen_config({records_file}, "qwen2.5-7b-instruct.jinja");
  config.tokenizer.options.template_variables["enable_thinking"] = "false";
  config.flow.layout = BatchLayout::packed;
  Pipeline pipeline(config, DistEnv::single());
  pipeline.start_epoch(0);
  const auto batches = test::drain(pipeline);

  const ChatTokenizer tokenizer(kTokenizerJson, pipeline.config().tokenizer.options);
  std::vector<std::string> lines;
  std::ifstream in(records_file);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::set<SampleId> seen;
  for (const auto& batch : batches) {
    const auto& info = batch->step_info();
    const auto cuts = batch->cu_seqlens();
    for (std::size_t row = 0; row < info.sample_ids.size(); ++row) {
      const SampleId id = info.sample_ids[row];
      CAPTURE(id);
      seen.insert(id);
      const auto parsed = parse_conversation(lines.at(id), "tool_use.jsonl");
      REQUIRE(std::holds_alternative<Conversation>(parsed));
      const auto alone = tokenizer.tokenize(std::get<Conversation>(parsed), {});
      REQUIRE(std::holds_alternative<TokenizedSample>(alone));
      const auto ids = batch->input_ids().subspan(
          static_cast<std::size_t>(cuts[row]), static_cast<std::size_t>(cuts[row + 1] - cuts[row]));
      CHECK(std::vector<std::int32_t>(ids.begin(), ids.end()) ==
            std::get<TokenizedSample>(alone).input_ids);
    }
  }
  CHECK(seen.size() == lines.size());
}

}  // namespace
}  // namespace odbatch
