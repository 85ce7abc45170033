// Chat tokenization through a model's own Jinja template, token-exact and label-exact against a
// reference (chat_tokenization_oracle.js, run by a CTest fixture): real templates (Qwen2-VL with
// multi-image content parts, Qwen2.5, ChatML, Llama-3.1, Llama-3.2, Mistral-Nemo, Gemma-2) on
// the dataset's conversations, with and without a default system prompt, encoded by
// tokenizer.json files that Hugging Face's tokenizers trained on the dataset. The reference
// renders with @huggingface/jinja, finds the supervised turns by the same rendering-diff rule,
// expands image tokens in the text as Qwen2-VL's processor does and labels tokens by the offsets
// Hugging Face's library reports. Where the template refuses a conversation (Gemma-2 raises on a
// system message; Mistral-Nemo moves the system message into the last user turn, so its turns
// are not found by rendering), odbatch must refuse it too.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/text/chat_tokenizer.hpp"

namespace odbatch::test {
namespace {

using nlohmann::json;

const std::filesystem::path kOracleDir(ODBATCH_CHAT_TOKENIZATION_ORACLE_DIR);

std::optional<std::string> optional_text(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::string>();
}

TokenizerOptions options_of(const json& entry) {
  TokenizerOptions options;
  options.chat_template = ChatTemplate::jinja;
  options.template_file =
      std::filesystem::path(ODBATCH_CHAT_TEMPLATE_DIR) / entry.at("template").get<std::string>();
  options.bos_token = optional_text(entry.at("bos_token"));
  options.eos_token = optional_text(entry.at("eos_token"));
  options.template_date = "2024-07-26";  // the reference's clock
  options.image_content =
      entry.at("image_content") == "parts" ? ImageContent::parts : ImageContent::text;
  options.default_system_prompt = optional_text(entry.at("system_prompt"));
  if (const auto preset = optional_text(entry.at("tiktoken_preset")))
    options.tiktoken_preset = *preset;
  if (entry.contains("template_variables"))
    for (const auto& [name, value] : entry.at("template_variables").items())
      options.template_variables[name] = value.dump();
  options.max_seq_len = 1u << 20;
  options.zero_labels = ZeroLabelPolicy::keep;
  return options;
}

// The first position where two sequences differ, for failure messages.
std::string first_difference(const std::vector<std::int32_t>& expected,
                             const std::vector<std::int32_t>& actual) {
  std::size_t at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
  const auto value = [](const std::vector<std::int32_t>& v, std::size_t i) {
    return i < v.size() ? std::to_string(v[i]) : std::string("(end)");
  };
  return "position " + std::to_string(at) + " of " + std::to_string(expected.size()) +
         ": expected " + value(expected, at) + ", got " + value(actual, at);
}

struct OracleTally {
  std::size_t equal = 0;
  std::size_t refused = 0;
  std::size_t with_images = 0;
  std::size_t supervised = 0;
};

// Tokenizes every case of `file` as its entry configures and compares with the reference's ids and
// labels, or with its refusal.
OracleTally compare_with_reference(const std::string& file) {
  std::ifstream in(kOracleDir / file);
  REQUIRE_MESSAGE(in.good(), "no reference cases at " << (kOracleDir / file));
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>,
           std::unique_ptr<const ChatTokenizer>>
      tokenizers;
  OracleTally tally;
  std::string line;
  while (std::getline(in, line)) {
    const json entry = json::parse(line);
    const std::string name = entry.at("name").get<std::string>();
    CAPTURE(name);
    const TokenizerOptions options = options_of(entry);
    const auto key = std::tuple(
        entry.at("template").get<std::string>(), entry.at("tokenizer").get<std::string>(),
        entry.at("image_content").get<std::string>(), options.default_system_prompt.value_or(""),
        entry.value("template_variables", json::object()).dump());
    auto& tokenizer = tokenizers[key];
    if (!tokenizer)
      tokenizer = std::make_unique<const ChatTokenizer>(
          std::filesystem::path(ODBATCH_TOKENIZER_ORACLE_DIR) /
              entry.at("tokenizer").get<std::string>(),
          options);

    auto parsed = parse_conversation(entry.at("record").get<std::string>(), name);
    const auto* rejected = std::get_if<RecordRejection>(&parsed);
    REQUIRE_MESSAGE(rejected == nullptr, (rejected ? rejected->message : std::string()));
    const auto& conversation = std::get<Conversation>(parsed);
    const auto visual = entry.at("visual_tokens").get<std::vector<std::uint32_t>>();
    const TokenizeResult result = tokenizer->tokenize(conversation, visual);

    if (entry.contains("error")) {
      const auto* error = std::get_if<TokenizeError>(&result);
      REQUIRE_MESSAGE(error != nullptr,
                      "the reference refused it: " << entry.at("error").get<std::string>());
      CHECK(error->reason == TokenizeErrorReason::template_refused);
      ++tally.refused;
      continue;
    }
    const auto* error = std::get_if<TokenizeError>(&result);
    REQUIRE_MESSAGE(error == nullptr, (error ? error->message : std::string()));
    const auto& sample = std::get<TokenizedSample>(result);
    const auto ids = entry.at("ids").get<std::vector<std::int32_t>>();
    const auto labels = entry.at("labels").get<std::vector<std::int32_t>>();
    CHECK_MESSAGE(sample.input_ids == ids, first_difference(ids, sample.input_ids));
    CHECK_MESSAGE(sample.labels == labels, first_difference(labels, sample.labels));
    CHECK(sample.image_spans.size() == visual.size());
    if (sample.input_ids == ids && sample.labels == labels) ++tally.equal;
    tally.with_images += visual.empty() ? 0 : 1;
    tally.supervised += sample.supervised_targets;
  }
  return tally;
}

TEST_CASE("chat tokenization with real Jinja templates equals the reference's ids and labels") {
  const OracleTally tally = compare_with_reference("chat_tokenization_cases.jsonl");
  MESSAGE(tally.equal << " conversations token- and label-exact (" << tally.with_images
                      << " with images, " << tally.supervised << " supervised targets), "
                      << tally.refused << " refused by both");
  CHECK(tally.equal >= 550);
  CHECK(tally.with_images >= 50);
  CHECK(tally.refused >= 50);
}

// Tools, tool calls and tool results (OpenAI's and LLaMA-Factory's layouts), records' own
// chat_template_kwargs and configured template variables, through Llama-3.1's, Llama-3.2's,
// Qwen2.5's, Mistral-Nemo's and Hermes-3's tool-use templates. Where a template refuses (Llama-3
// takes one call at a time, Mistral-Nemo wants 9-character call ids and moves the system message,
// Hermes-3 writes a tool result differently when it is last, so no assistant turn after one is
// found by rendering), odbatch refuses too.
TEST_CASE("tool calls and template variables render as transformers would pass them") {
  const OracleTally tally = compare_with_reference("tool_call_cases.jsonl");
  MESSAGE(tally.equal << " tool-use conversations token- and label-exact (" << tally.supervised
                      << " supervised targets), " << tally.refused << " refused by both");
  CHECK(tally.equal >= 20);
  CHECK(tally.refused >= 10);
}

}  // namespace
}  // namespace odbatch::test
