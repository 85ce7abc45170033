// Byte-level BPE (tokenizer.json), tiktoken and sentencepiece behind TextTokenizer, on small
// models: merge order, both JSON encodings of merges, added-token flags, the post-processor, and
// the errors that name the JSON path or line of what is wrong or unsupported. The reference
// libraries' parity is in text_tokenizer_oracle_test.cpp.
#include <doctest/doctest.h>
#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "odbatch/text/sentencepiece_tokenizer.hpp"
#include "odbatch/text/tiktoken_tokenizer.hpp"
#include "source_test_files.hpp"
#include "tiny_tokenizer_files.hpp"
#include "tokenizer_test_models.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch {
namespace {

using json = nlohmann::json;
using Ids = std::vector<TokenId>;

using test::added_token;
using test::base64;
using test::byte_symbol;
using test::tiny_ranks;
using test::tiny_tokenizer;

std::unique_ptr<TextTokenizer> parse(const json& config) {
  return parse_hf_tokenizer(config.dump(), "tokenizer.json");
}

std::string load_error(const json& config) {
  try {
    parse(config);
  } catch (const TokenizerModelError& error) {
    return error.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("byte-level BPE merges by rank, leftmost first, and decodes back") {
  const auto tokenizer = parse(tiny_tokenizer());
  CHECK(tokenizer->encode("hello") == Ids{259});
  CHECK(tokenizer->encode("hello world") == Ids{259, 261, 'o', 'r', 'l', 'd'});
  CHECK(tokenizer->encode("aaa") == Ids{260, 'a'});  // the leftmost pair of equal rank merges
  CHECK(tokenizer->encode("hel") == Ids{256, 'l'});
  CHECK(tokenizer->encode("") == Ids{});
  CHECK(tokenizer->decode(tokenizer->encode("hello world \xE2\x98\x83\n")) ==
        "hello world \xE2\x98\x83\n");
  CHECK(tokenizer->vocab_size() == 262);
  CHECK(tokenizer->token_to_id(byte_symbol(' ') + "w") == 261);
  CHECK(tokenizer->id_to_token(259) == "hello");
  CHECK_FALSE(tokenizer->id_to_token(5000).has_value());
  CHECK_THROWS_AS(tokenizer->decode(Ids{5000}), std::out_of_range);
  // A character cut in the middle decodes to U+FFFD, as the reference's lossy decode does.
  CHECK(tokenizer->decode(Ids{0xE2, 0x98}) == "\xEF\xBF\xBD");
  CHECK_THROWS_AS(tokenizer->encode("bad \xFF byte"), std::invalid_argument);
}

TEST_CASE("byte-level BPE: merges as \"a b\" strings and as [a, b] pairs give the same ids") {
  const auto strings = parse(tiny_tokenizer(true));
  const auto pairs = parse(tiny_tokenizer(false));
  for (const std::string text : {"hello", "hello world", "aaaa hell", "x"})
    CHECK(strings->encode(text) == pairs->encode(text));
}

TEST_CASE("byte-level BPE: ignore_merges takes a whole word that is in the vocabulary") {
  json config = tiny_tokenizer();
  // "hello" (259) also reachable by merges; a vocabulary-only word shows the difference.
  config["model"]["vocab"]["wor"] = 262;
  CHECK(parse(config)->encode("wor") == Ids{'w', 'o', 'r'});
  config["model"]["ignore_merges"] = true;
  CHECK(parse(config)->encode("wor") == Ids{262});
}

TEST_CASE("added tokens: special ones optional, lstrip/rstrip, single_word, post-processor") {
  json config = tiny_tokenizer();
  config["added_tokens"] = {added_token(262, "<|im_start|>"),
                            added_token(263, "<mask>", {{"lstrip", true}, {"rstrip", true}}),
                            added_token(264, "[W]", {{"single_word", true}, {"special", false}})};
  config["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<|im_start|>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"pair", nullptr},
      {"special_tokens",
       {{"<|im_start|>", {{"id", "<|im_start|>"}, {"ids", {262}}, {"tokens", {"<|im_start|>"}}}}}}};
  const auto tokenizer = parse(config);
  CHECK(tokenizer->encode("hello<|im_start|>hello") == Ids{259, 262, 259});
  const Ids as_text = tokenizer->encode("<|im_start|>", {.recognize_special_tokens = false});
  CHECK(std::find(as_text.begin(), as_text.end(), 262) == as_text.end());
  CHECK(tokenizer->decode(as_text) == "<|im_start|>");
  CHECK(tokenizer->encode("hello  <mask>  hello") == Ids{259, 263, 259});
  CHECK(tokenizer->encode("a [W] b") == Ids{'a', ' ', 264, ' ', 'b'});
  CHECK(tokenizer->encode("a[W]b") == Ids{'a', '[', 'W', ']', 'b'});  // not a single word
  CHECK(tokenizer->encode("hello", {.add_special_tokens = true}) == Ids{262, 259});
  CHECK(tokenizer->special_token_ids().size() == 2);
  CHECK(tokenizer->decode(Ids{262, 259, 264}, true) == "hello[W]");
  CHECK(tokenizer->vocab_size() == 265);
}

TEST_CASE("byte-level BPE is safe to share between threads") {
  const auto tokenizer = parse(tiny_tokenizer());
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "hello world aaa " + std::to_string(i) + " ";
  const Ids expected = tokenizer->encode(text);
  std::vector<Ids> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = tokenizer->encode(text); });
  for (auto& thread : threads) thread.join();
  for (const Ids& result : results) CHECK(result == expected);
}

TEST_CASE("tokenizer.json features it cannot honour fail loading, naming the JSON path") {
  const auto error_with = [](const std::string& pointer, const json& value) {
    json config = tiny_tokenizer();
    config[json::json_pointer(pointer)] = value;
    return load_error(config);
  };
  CHECK(error_with("/normalizer", {{"type", "Lowercase"}}) ==
        "tokenizer.model: tokenizer.json: normalizer.type: 'Lowercase' is not supported");
  CHECK(error_with("/pre_tokenizer/pretokenizers/0/behavior", "Sideways")
            .find("pre_tokenizer.pretokenizers[0].behavior: 'Sideways' is not supported") !=
        std::string::npos);
  CHECK(error_with("/pre_tokenizer/pretokenizers/0/pattern", {{"Regex", "(unclosed"}})
            .find("pre_tokenizer.pretokenizers[0].pattern.Regex: regex does not compile") !=
        std::string::npos);
  CHECK(error_with("/pre_tokenizer", {{"type", "Metaspace"}})
            .find("pre_tokenizer.type: 'Metaspace'") != std::string::npos);
  CHECK(error_with("/model/dropout", 0.1).find("model.dropout") != std::string::npos);
  CHECK(error_with("/model/continuing_subword_prefix", "##")
            .find("model.continuing_subword_prefix: is not supported") != std::string::npos);
  CHECK(error_with("/model/type", "WordPiece").find("model.type") != std::string::npos);
  CHECK(error_with("/model/merges/1", "l q").find("model.merges[1]: 'lq' is not in model.vocab") !=
        std::string::npos);
  CHECK(error_with("/model/merges/1", "l zz").find("model.merges[1]: 'zz' is not in model.vocab") !=
        std::string::npos);
  CHECK(error_with("/model/merges/2", json::array({"he"})).find("model.merges[2]") !=
        std::string::npos);
  CHECK(error_with("/truncation", {{"max_length", 8}}).find("truncation: is not supported") !=
        std::string::npos);
  CHECK(error_with("/post_processor", {{"type", "Mystery"}}).find("post_processor.type") !=
        std::string::npos);
  CHECK(error_with("/decoder", {{"type", "WordPiece"}}).find("decoder.type: 'WordPiece'") !=
        std::string::npos);
  CHECK(error_with("/added_tokens", json::array({added_token(256, "<x>")}))
            .find("added_tokens[0].id: is model.vocab's id of 'he'") != std::string::npos);
  CHECK(error_with("/added_tokens", json::array({added_token(300, "<x>")}))
            .find("added_tokens[0].id: is 300, but the Hugging Face library assigns this token "
                  "262") != std::string::npos);
  CHECK(error_with("/added_tokens", json::array({added_token(262, "<x>"), added_token(263, "<x>")}))
            .find("added_tokens[1].content: '<x>' is added twice") != std::string::npos);
  json missing_byte = tiny_tokenizer();
  missing_byte["model"]["vocab"].erase(byte_symbol(0));
  CHECK(load_error(missing_byte).find("model.vocab: lacks the byte-level symbol") !=
        std::string::npos);
  json no_byte_level = tiny_tokenizer();
  no_byte_level["pre_tokenizer"]["pretokenizers"].erase(1);
  CHECK(load_error(no_byte_level).find("pre_tokenizer: must end with ByteLevel") !=
        std::string::npos);
  CHECK_THROWS_WITH_AS(parse_hf_tokenizer("{not json", "x.json"),
                       doctest::Contains("x.json: not valid JSON"), TokenizerModelError);
  CHECK_THROWS_AS(load_hf_tokenizer("/nonexistent/tokenizer.json"), TokenizerModelError);
}

TEST_CASE("tiktoken ranks file: encodes by rank, special tokens, and errors naming the line") {
  test::ScratchDirectory dir;
  const std::string ranks = tiny_ranks();
  const auto file = dir.write("ranks.tiktoken", ranks);
  TiktokenOptions options;
  options.pattern = tiktoken_pattern_preset("cl100k_base");
  options.special_tokens = {{"<|endoftext|>", 1000}};
  const auto tokenizer = load_tiktoken(file, options);
  CHECK(tokenizer->encode("hello") == Ids{259});
  CHECK(tokenizer->encode("hell!") == Ids{258, '!'});
  CHECK(tokenizer->encode("hello<|endoftext|>") == Ids{259, 1000});
  CHECK(tokenizer->encode("<|endoftext|>", {.recognize_special_tokens = false}).size() > 1);
  CHECK(tokenizer->decode(Ids{259, 1000}) == "hello<|endoftext|>");
  CHECK(tokenizer->decode(Ids{259, 1000}, true) == "hello");
  CHECK(tokenizer->vocab_size() == 1001);
  CHECK_THROWS_AS(tiktoken_pattern_preset("p50k"), ConfigError);
  CHECK(tiktoken_pattern_preset("llama3") == kCl100kBasePattern);

  const auto error_for = [&](const std::string& text, TiktokenOptions with = {}) -> std::string {
    try {
      load_tiktoken(dir.write("bad.tiktoken", text), with);
    } catch (const TokenizerModelError& error) {
      return error.what();
    }
    return "(loaded)";
  };
  CHECK(error_for(ranks + "@@@@ 300\n").find("line 261: the token is not valid base64") !=
        std::string::npos);
  CHECK(error_for(ranks + base64("xy") + " 12\n").find("line 261: rank 12 is used twice") !=
        std::string::npos);
  CHECK(error_for(ranks.substr(ranks.find('\n') + 1)).find("no rank for the single byte 0") !=
        std::string::npos);
  TiktokenOptions colliding;
  colliding.special_tokens = {{"<s>", 259}};
  CHECK(error_for(ranks, colliding).find("special_tokens: '<s>': id 259 is a rank") !=
        std::string::npos);
  TiktokenOptions bad_pattern;
  bad_pattern.pattern = "(";
  CHECK(error_for(ranks, bad_pattern).find("pattern: regex does not compile") != std::string::npos);
}

}  // namespace odbatch

namespace odbatch {

TEST_CASE(
    "a sentencepiece model behind the TextTokenizer interface encodes as sentencepiece does") {
  const std::string model = std::string(ODBATCH_TOKENIZER_TEST_MODEL_DIR) + "/" +
                            std::string(test::kChatModel) + ".model";
  const auto tokenizer = load_sentencepiece_tokenizer(model);
  sentencepiece::SentencePieceProcessor reference;
  REQUIRE(reference.Load(model).ok());
  const std::string text = "Hello world, this is a test of the tokenizer.";
  std::vector<int> expected;
  REQUIRE(reference.Encode(text, &expected).ok());
  const Ids ids = tokenizer->encode(text);
  CHECK(ids == Ids(expected.begin(), expected.end()));
  CHECK(tokenizer->decode(ids) == text);
  CHECK(tokenizer->vocab_size() == static_cast<std::uint32_t>(reference.GetPieceSize()));

  const auto bos = static_cast<TokenId>(reference.bos_id());
  const auto eos = static_cast<TokenId>(reference.eos_id());
  CHECK(tokenizer->special_token_ids().size() == 2);
  const Ids with_controls = tokenizer->encode("<s>Hello</s>");
  CHECK(with_controls.front() == bos);
  CHECK(with_controls.back() == eos);
  CHECK(tokenizer->decode(with_controls) == "<s>Hello</s>");
  CHECK(tokenizer->decode(with_controls, true) == "Hello");
  const Ids as_text = tokenizer->encode("<s>", {.recognize_special_tokens = false});
  CHECK(std::find(as_text.begin(), as_text.end(), bos) == as_text.end());
  CHECK(tokenizer->encode("Hello", {.add_special_tokens = true}).front() == bos);
  CHECK(tokenizer->token_to_id("<s>") == bos);
  CHECK_FALSE(tokenizer->token_to_id("no such piece").has_value());
  CHECK(tokenizer->id_to_token(bos) == "<s>");
  CHECK_THROWS_AS(load_sentencepiece_tokenizer("/nonexistent.model"), TokenizerModelError);
}

}  // namespace odbatch

namespace odbatch {
namespace {

using Ranges = std::vector<TokenOffsets>;

// Encodes with offsets and checks what holds for every tokenizer: the ids are encode's, one
// range per id, each within the text, begins non-decreasing; with `tiles`, the ranges also
// follow one another from the start to the end of the text (text unchanged by normalization).
Ranges offsets_of(const TextTokenizer& tokenizer, const std::string& text,
                  const TextEncodeOptions& options = {}, bool tiles = true) {
  Ids ids = {7};  // appended to, not replaced
  Ranges offsets = {{1, 2}};
  tokenizer.encode_with_offsets_into(text, options, ids, offsets);
  REQUIRE(ids.size() == offsets.size());
  CHECK(ids.front() == 7);
  CHECK(offsets.front() == TokenOffsets{1, 2});
  ids.erase(ids.begin());
  offsets.erase(offsets.begin());
  CHECK(ids == tokenizer.encode(text, options));
  std::string covered;
  std::uint32_t previous_begin = 0, at = 0;
  for (const TokenOffsets& range : offsets) {
    CHECK(range.begin <= range.end);
    CHECK(range.end <= text.size());
    CHECK(range.begin >= previous_begin);
    previous_begin = range.begin;
    if (!tiles) continue;
    CHECK(range.begin == at);
    covered += text.substr(range.begin, range.end - range.begin);
    at = range.end;
  }
  if (tiles) CHECK(covered == text);
  return offsets;
}

json with_normalizer(json config, const std::string& form) {
  config["normalizer"] = {{"type", form}};
  return config;
}

}  // namespace

TEST_CASE("offsets, byte-level BPE: each token's bytes, characters split between tokens") {
  const auto tokenizer = parse(tiny_tokenizer());
  // hello, " w", o, r, l, d, " ", then the snowman's three bytes, one token each.
  CHECK(offsets_of(*tokenizer, "hello world \xE2\x98\x83\n") == Ranges{{0, 5},
                                                                       {5, 7},
                                                                       {7, 8},
                                                                       {8, 9},
                                                                       {9, 10},
                                                                       {10, 11},
                                                                       {11, 12},
                                                                       {12, 13},
                                                                       {13, 14},
                                                                       {14, 15},
                                                                       {15, 16}});
  CHECK(offsets_of(*tokenizer, "").empty());
  offsets_of(*tokenizer, "aaaa hell  x\t\t\n 12 \xF0\x9F\x98\x80!");
  std::vector<TokenId> ids;
  Ranges offsets;
  CHECK_THROWS_AS(tokenizer->encode_with_offsets_into("bad \xFF", {}, ids, offsets),
                  std::invalid_argument);
}

TEST_CASE("offsets, byte-level BPE: added tokens with their stripped spaces, post-processor") {
  json config = tiny_tokenizer();
  config["added_tokens"] = {added_token(262, "<|im_start|>"),
                            added_token(263, "<mask>", {{"lstrip", true}, {"rstrip", true}})};
  config["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<|im_start|>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
        {{"SpecialToken", {{"id", "<mask>"}, {"type_id", 0}}}}}},
      {"pair", nullptr},
      {"special_tokens",
       {{"<|im_start|>", {{"id", "<|im_start|>"}, {"ids", {262}}, {"tokens", {"<|im_start|>"}}}},
        {"<mask>", {{"id", "<mask>"}, {"ids", {263}}, {"tokens", {"<mask>"}}}}}}};
  const auto tokenizer = parse(config);
  CHECK(offsets_of(*tokenizer, "hello  <mask>  hello") == Ranges{{0, 5}, {5, 15}, {15, 20}});
  CHECK(offsets_of(*tokenizer, "hello<|im_start|>") == Ranges{{0, 5}, {5, 17}});
  // The special token as text: its bytes, tiled.
  CHECK(offsets_of(*tokenizer, "<|im_start|>", {.recognize_special_tokens = false}).size() > 1);
  // Tokens the post-processor adds: empty, at the start and at the end.
  CHECK(offsets_of(*tokenizer, "hello", {.add_special_tokens = true}, false) ==
        Ranges{{0, 0}, {0, 5}, {5, 5}});
}

TEST_CASE("offsets, byte-level BPE: the space add_prefix_space inserts stands for no byte") {
  json config = tiny_tokenizer();
  config["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true;
  const auto tokenizer = parse(config);
  // " world": " w" holds the inserted space and "w"; "hello" needs none.
  CHECK(offsets_of(*tokenizer, "world") == Ranges{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});
  // "x" becomes " x": the space alone is a token, of no byte of the text.
  CHECK(offsets_of(*tokenizer, "x", {}, false) == Ranges{{0, 0}, {0, 1}});
  // Inside a chunk that normalization changed, the inserted space takes the chunk's range: NFC
  // turns "e" U+0301 U+0302 into U+00E9 U+0302, and the split starts a piece at U+0302.
  config["normalizer"] = {{"type", "NFC"}};
  CHECK(offsets_of(*parse(config), "e\xCC\x81\xCC\x82", {}, false) ==
        Ranges{{0, 0}, {0, 5}, {0, 5}, {0, 5}, {0, 5}, {0, 5}});
}

TEST_CASE("offsets, byte-level BPE: text that normalization changes maps back chunk by chunk") {
  // NFC composes "e" and U+0301 into U+00E9: the tokens of that chunk (it begins at the ASCII
  // "e") get its whole range; the unchanged text around it keeps exact ranges.
  const auto nfc = parse(with_normalizer(tiny_tokenizer(), "NFC"));
  CHECK(offsets_of(*nfc, "x e\xCC\x81 hello", {}, false) ==
        Ranges{{0, 1}, {1, 2}, {2, 5}, {2, 5}, {5, 6}, {6, 11}});
  // Text NFC leaves alone is exact, composed characters and all.
  offsets_of(*nfc, "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 hello");
  // NFKC turns the ligature U+FB01 into "fi": both tokens have the ligature's range.
  const auto nfkc = parse(with_normalizer(tiny_tokenizer(), "NFKC"));
  CHECK(offsets_of(*nfkc, "\xEF\xAC\x81x", {}, false) == Ranges{{0, 3}, {0, 3}, {3, 4}});
  // NFD lengthens U+00E9 to "e" U+0301: three tokens, all of the two bytes of U+00E9.
  const auto nfd = parse(with_normalizer(tiny_tokenizer(), "NFD"));
  CHECK(offsets_of(*nfd, "\xC3\xA9!", {}, false) == Ranges{{0, 2}, {0, 2}, {0, 2}, {2, 3}});
}

TEST_CASE("offsets, byte-level BPE: an added token matched after normalization") {
  json config = with_normalizer(tiny_tokenizer(), "NFC");
  config["added_tokens"] = {
      added_token(262, "caf\xC3\xA9", {{"normalized", true}, {"special", false}})};
  const auto tokenizer = parse(config);
  // "cafe" U+0301 normalizes to the token's text; its range runs to the end of the changed chunk.
  const Ranges ranges = offsets_of(*tokenizer, "cafe\xCC\x81!", {}, false);
  CHECK(ranges == Ranges{{0, 6}, {6, 7}});
  CHECK(tokenizer->encode("cafe\xCC\x81!").front() == 262);
}

TEST_CASE("offsets, tiktoken: each token's bytes, special tokens' own range") {
  test::ScratchDirectory dir;
  TiktokenOptions options;
  options.pattern = tiktoken_pattern_preset("cl100k_base");
  options.special_tokens = {{"<|endoftext|>", 1000}};
  const auto tokenizer = load_tiktoken(dir.write("ranks.tiktoken", tiny_ranks()), options);
  const Ranges ranges = offsets_of(*tokenizer, "hello hell<|endoftext|>x");
  CHECK(ranges == Ranges{{0, 5}, {5, 6}, {6, 10}, {10, 23}, {23, 24}});
  offsets_of(*tokenizer, "<|endoftext|>", {.recognize_special_tokens = false});
  offsets_of(*tokenizer, "  \xE2\x98\x83\xF0\x9F\x98\x80 12345\n\n hello's");
}

TEST_CASE("offsets, sentencepiece: the pieces' ranges, control pieces and BOS") {
  const auto bytes = load_sentencepiece_tokenizer(test::model_path(test::kByteChatModel));
  offsets_of(*bytes, "Hello world, this is a test.");
  offsets_of(*bytes, "A snowman \xE2\x98\x83 and \xF0\x9F\x98\x80 here");
  const Ranges with_controls = offsets_of(*bytes, "<s>Hello</s>");
  CHECK(with_controls.front() == TokenOffsets{0, 3});
  CHECK(with_controls.back() == TokenOffsets{8, 12});
  CHECK(offsets_of(*bytes, "Hello", {.add_special_tokens = true}, false).front() ==
        TokenOffsets{0, 0});
  // The default normalization drops extra spaces: no range holds them, and all lie in order.
  const auto chat = load_sentencepiece_tokenizer(test::model_path(test::kChatModel));
  const Ranges spaced = offsets_of(*chat, "  Hello   world  ", {}, false);
  REQUIRE_FALSE(spaced.empty());
  CHECK(spaced.front().begin >= 2);
  CHECK(spaced.back().end <= 15);
}

}  // namespace odbatch
