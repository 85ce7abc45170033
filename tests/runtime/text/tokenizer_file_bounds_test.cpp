// Tokenizer files come from model repositories: a hostile one costs a named error, never
// gigabytes or minutes. Nesting, ids and ranks are bounded when loading; added tokens load and
// match in near-linear time; a pattern that backtracks without end refuses the text it is
// matched on, which the chat tokenizer turns into a rejected record.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <variant>

#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "odbatch/text/tiktoken_tokenizer.hpp"
#include "source_test_files.hpp"
#include "tiny_tokenizer_files.hpp"

namespace odbatch {
namespace {

using json = nlohmann::json;
using Ids = std::vector<TokenId>;

std::string load_error(const std::string& text) {
  try {
    parse_hf_tokenizer(text, "hostile/tokenizer.json");
  } catch (const TokenizerModelError& error) {
    return error.what();
  }
  return "(loaded)";
}

// The tiny tokenizer with `depth` normalizer Sequences within each other around NFC.
std::string nested_normalizers(std::size_t depth) {
  std::string nested;
  for (std::size_t i = 0; i < depth; ++i) nested += R"({"type":"Sequence","normalizers":[)";
  nested += R"({"type":"NFC"})";
  for (std::size_t i = 0; i < depth; ++i) nested += "]}";
  json config = test::tiny_tokenizer();
  config["normalizer"] = "NESTED";
  std::string text = config.dump();
  return text.replace(text.find(R"("NESTED")"), 8, nested);
}

// The tiny tokenizer with a Split pre-tokenizer of `pattern` before its ByteLevel.
json with_split_pattern(const std::string& pattern) {
  json config = test::tiny_tokenizer();
  config["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", pattern}};
  return config;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a tokenizer.json nested deeper than 64 levels is refused before it is parsed") {
  CHECK(load_error(nested_normalizers(3000)) ==
        "tokenizer.model: hostile/tokenizer.json: nests arrays and objects deeper than 64 levels, "
        "beyond any real tokenizer.json (a Sequence within a Sequence...)");
  CHECK(load_error(nested_normalizers(20)) == "(loaded)");
  // Brackets inside strings are text, not nesting.
  json brackets = test::tiny_tokenizer();
  brackets["model"]["vocab"][std::string(200, '[')] = 262;
  CHECK(load_error(brackets.dump()) == "(loaded)");
}

TEST_CASE("more than 64 normalizers or pre-tokenizers, Sequences flattened, are refused") {
  json config = test::tiny_tokenizer();
  auto& steps = config["pre_tokenizer"]["pretokenizers"];
  const json split = steps[0];
  for (int i = 0; i < 62; ++i) steps.insert(steps.begin(), split);
  CHECK(load_error(config.dump()) == "(loaded)");  // 63 Splits and ByteLevel
  json sequence = {{"type", "Sequence"}};
  sequence["pretokenizers"] = json::array({split});
  steps.insert(steps.begin(), sequence);
  CHECK(load_error(config.dump()) ==
        "tokenizer.model: hostile/tokenizer.json: pre_tokenizer.pretokenizers[64]: is beyond the "
        "limit of 64 pre-tokenizers (Sequences flattened)");
  json normalizers = test::tiny_tokenizer();
  normalizers["normalizer"] = {{"type", "Sequence"},
                               {"normalizers", json::array({{{"type", "NFC"}}})}};
  for (int i = 0; i < 64; ++i)
    normalizers["normalizer"]["normalizers"].push_back({{"type", "NFD"}});
  CHECK(load_error(normalizers.dump()) ==
        "tokenizer.model: hostile/tokenizer.json: normalizer.normalizers[64]: is beyond the limit "
        "of 64 normalizers (Sequences flattened)");
}

TEST_CASE("a vocabulary id far beyond the number of entries is refused, not allocated for") {
  // 263 entries with "ab": ids must be below 2 x 263 + 65536 = 66062.
  json config = test::tiny_tokenizer();
  config["model"]["vocab"]["ab"] = 50'000'000;
  CHECK(load_error(config.dump()) ==
        "tokenizer.model: hostile/tokenizer.json: model.vocab[\"ab\"]: id 50000000 is far beyond "
        "the vocabulary's 263 entries (ids must be below 2 x entries + 65536 = 66062)");
  config["model"]["vocab"]["ab"] = 66'061;
  CHECK(load_error(config.dump()) == "(loaded)");
}

TEST_CASE("a tiktoken rank far beyond the number of lines is refused, not allocated for") {
  test::ScratchDirectory dir;
  // 261 lines with "ab": ranks must be below 2 x 261 + 65536 = 66058.
  const std::string ranks = test::tiny_ranks() + test::base64("ab") + " ";
  const auto error_for = [&](const std::string& rank) -> std::string {
    try {
      load_tiktoken(dir.write("ranks.tiktoken", ranks + rank + "\n"), {});
    } catch (const TokenizerModelError& error) {
      return error.what();
    }
    return "(loaded)";
  };
  CHECK(error_for("100000000")
            .ends_with("ranks.tiktoken: line 261: rank 100000000 is far beyond the file's 261 "
                       "lines (ranks must be "
                       "below 2 x lines + 65536 = 66058)"));
  CHECK(error_for("66057") == "(loaded)");
}

TEST_CASE("many added tokens load and match in near-linear time, longest match first") {
  json config = test::tiny_tokenizer();
  constexpr TokenId kAdded = 20'000;
  for (TokenId i = 0; i < kAdded; ++i)
    config["added_tokens"].push_back(test::added_token(262 + i, "<t" + std::to_string(i) + ">"));
  const std::string text = config.dump();
  const auto start = std::chrono::steady_clock::now();
  const auto tokenizer = parse_hf_tokenizer(text, "many.json");
  const Ids ids = tokenizer->encode(std::string(256 * 1024, '<'));
  // Quadratic loading and matching took 38 s here; linear takes 0.3 s (more under sanitizers).
  CHECK(seconds_since(start) < 10.0);
  CHECK(ids.size() == 256 * 1024);
  CHECK(tokenizer->encode("<t1><t12><t123>x<t19999") ==
        Ids{263, 274, 385, 'x', '<', 't', '1', '9', '9', '9', '9'});
  CHECK(tokenizer->token_to_id("<t19999>") == 262 + kAdded - 1);

  // Tokens that overlap: the longest at the leftmost position wins.
  json overlapping = test::tiny_tokenizer();
  overlapping["added_tokens"] = {test::added_token(262, "<a"), test::added_token(263, "<abc"),
                                 test::added_token(264, "bc>"), test::added_token(265, "<ab")};
  const auto matcher = parse_hf_tokenizer(overlapping.dump(), "overlapping.json");
  CHECK(matcher->encode("<abc><ab<a") == Ids{263, '>', 265, 262});
  CHECK(matcher->encode("x<abc>") == Ids{'x', 263, '>'});
  CHECK(matcher->encode("abc>") == Ids{'a', 264});
}

TEST_CASE("a pattern that backtracks without end refuses the text, naming itself and the budget") {
  const auto tokenizer = parse_hf_tokenizer(with_split_pattern("(a+)+$").dump(), "t.json");
  const std::string text = std::string(40, 'a') + "!";
  CHECK_THROWS_WITH_AS(tokenizer->encode(text),
                       "the pattern '(a+)+$' hit the match budget of 10001312 (10000000 + 32 per "
                       "byte of text) on a text of 41 bytes",
                       std::invalid_argument);
  CHECK(tokenizer->encode("hello") == Ids{259});
  // A long pattern is quoted cut short.
  const std::string long_pattern = "(a+)+$|" + std::string(100, 'z');
  const std::string quoted = "the pattern '" + long_pattern.substr(0, 80) + "...' (107 bytes) hit";
  CHECK_THROWS_WITH_AS(
      parse_hf_tokenizer(with_split_pattern(long_pattern).dump(), "t.json")->encode(text),
      doctest::Contains(quoted.c_str()), std::invalid_argument);
}

TEST_CASE("a pattern that rescans the rest of the text at every match spends the text's budget") {
  // Each match call backtracks little, but the lookahead scans to the end of the text: without a
  // budget for the whole text, 2 MB took minutes.
  const auto tokenizer = parse_hf_tokenizer(with_split_pattern("a(?=a*b)|a").dump(), "t.json");
  CHECK_THROWS_WITH_AS(tokenizer->encode(std::string(2'000'000, 'a')),
                       "the pattern 'a(?=a*b)|a' hit the match budget of 74000000 (10000000 + 32 "
                       "per byte of text) on a text of 2000000 bytes",
                       std::invalid_argument);
  // The same pattern on a text where it does not rescan much is matched in full.
  std::string short_runs;
  for (int i = 0; i < 100'000; ++i) short_runs += "aaab";
  CHECK(tokenizer->encode(short_runs).size() == 400'000);
}

TEST_CASE("honest work beyond the free steps of a match call is charged, and fits the budget") {
  // `\s+(?!\S)` on a megabyte of white space takes one call of about a million steps.
  const auto tokenizer =
      parse_hf_tokenizer(with_split_pattern(R"(\s+(?!\S)|\s+|\S+)").dump(), "t.json");
  const std::string text = std::string(1'000'000, ' ') + "x";
  CHECK(tokenizer->encode(text).size() == text.size());
}

TEST_CASE("a record on which the pattern hits its limit is rejected, the others tokenized") {
  test::ScratchDirectory dir;
  json config = with_split_pattern("(a+)+$");
  config["added_tokens"] = {test::added_token(262, "<|im_start|>"),
                            test::added_token(263, "<|im_end|>")};
  TokenizerOptions options;
  options.format = TokenizerFormat::hf_json;
  const ChatTokenizer tokenizer(dir.write("tokenizer.json", config.dump()), options);
  Conversation conversation;
  conversation.messages = {{Role::user, std::string(40, 'a') + "!"}, {Role::assistant, "ok"}};
  const TokenizeResult hostile = tokenizer.tokenize(conversation, {});
  REQUIRE(std::holds_alternative<TokenizeError>(hostile));
  CHECK(std::get<TokenizeError>(hostile).reason == TokenizeErrorReason::template_refused);
  CHECK(std::get<TokenizeError>(hostile).message.find(
            "the pattern '(a+)+$' hit the match budget") != std::string::npos);
  conversation.messages[0].content = "hello";
  CHECK(std::holds_alternative<TokenizedSample>(tokenizer.tokenize(conversation, {})));
}

}  // namespace odbatch
