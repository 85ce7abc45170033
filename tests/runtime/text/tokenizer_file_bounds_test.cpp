// Tokenizer files come from model repositories: a hostile one costs a named error, never
// gigabytes or minutes. Nesting, ids and ranks are bounded when loading.
#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "odbatch/text/tiktoken_tokenizer.hpp"
#include "source_test_files.hpp"
#include "tiny_tokenizer_files.hpp"

namespace odbatch {
namespace {

using json = nlohmann::json;

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

}  // namespace odbatch
