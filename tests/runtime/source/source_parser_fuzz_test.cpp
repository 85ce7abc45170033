// Mutated records: whatever the bytes, the parser returns a conversation or a rejection naming
// the record's location, and never throws. One exception escaping it would end the epoch, and
// through the abort every rank's, for a single bad line.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "odbatch/core/split_mix64.hpp"
#include "odbatch/source/conversation_parser.hpp"

namespace odbatch {
namespace {

std::size_t below(SplitMix64& rng, std::size_t bound) {
  return static_cast<std::size_t>(rng.next() % bound);
}

// "[0,0,...,0]".
std::string zeros_array(std::size_t size) {
  std::string array = "[0";
  for (std::size_t i = 1; i < size; ++i) array += ",0";
  return array + "]";
}

// Pieces that have made JSON parsers throw or blow up: numbers out of range, escapes of lone
// surrogates and NUL, raw control bytes, invalid UTF-8, deep or unclosed nesting, long arrays.
const std::array<std::string, 16> kHostilePieces = {
    "1e400",
    "-1e400",
    "99777891e891essa ",
    "123456789012345678901234567890e999999",
    "\"\\ud800\"",
    "\"\\u0000\"",
    std::string("\"a\0b\"", 5),
    "\"\x01\x1f\"",
    "\xff\xfe",
    "\xc0\xaf",
    std::string(200, '['),
    std::string(200, '{'),
    std::string(100, '[') + std::string(100, ']'),
    zeros_array(2000),
    "{\"conversations\": null}",
    "\"<image>\"",
};

const std::array<std::string_view, 4> kRecords = {
    R"({"id": "a", "image": "x/1.jpg", "conversations": [{"from": "human", "value": "What is this?\n<image>"}, {"from": "gpt", "value": "A cat."}]})",
    R"({"images": ["a.jpg", "b.jpg"], "conversations": [{"from": "system", "value": ""}, {"from": "human", "value": "<image> vs <image>"}, {"from": "gpt", "value": "same"}]})",
    R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "Caption"}, {"type": "image_url", "image_url": {"url": "p.jpg"}}]}, {"role": "assistant", "content": "A tree."}]})",
    R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi \u00e9"}, {"role": "assistant", "content": "Hello"}], "meta": {"n": [1, 2.5, -3e10, true, null]}})",
};

std::string mutate(std::string record, SplitMix64& rng) {
  const std::size_t mutations = 1 + below(rng, 3);
  for (std::size_t m = 0; m < mutations; ++m) {
    const std::size_t at = below(rng, record.size() + 1);
    switch (below(rng, 5)) {
      case 0:  // a hostile piece inserted anywhere
        record.insert(at, kHostilePieces[below(rng, kHostilePieces.size())]);
        break;
      case 1:  // a hostile piece in place of a value: after a colon
        if (const auto colon = record.find(':', at); colon != std::string::npos) {
          const auto end = record.find_first_of(",}]", colon);
          record.replace(colon + 1, end == std::string::npos ? 0 : end - colon - 1,
                         kHostilePieces[below(rng, kHostilePieces.size())]);
        }
        break;
      case 2:  // one byte overwritten
        if (at < record.size()) record[at] = static_cast<char>(rng.next());
        break;
      case 3:  // a run deleted
        record.erase(at, below(rng, 24));
        break;
      default:  // truncated
        record.resize(at);
    }
  }
  return record;
}

}  // namespace

TEST_CASE("thousands of mutated records parse or are rejected with their location, never thrown") {
  SplitMix64 rng(20261204);
  std::size_t accepted = 0;
  std::size_t rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string record = mutate(std::string(kRecords[below(rng, kRecords.size())]), rng);
    std::variant<Conversation, RecordRejection> result;
    try {
      result = parse_conversation(record, "fuzz.jsonl:7");
    } catch (const std::exception& e) {
      FAIL("parse_conversation threw " << std::string(e.what()) << " for " << record);
    }
    if (const auto* rejection = std::get_if<RecordRejection>(&result)) {
      ++rejected;
      CAPTURE(record);
      CHECK(rejection->message.starts_with("fuzz.jsonl:7: "));
    } else {
      ++accepted;
    }
  }
  MESSAGE(accepted << " mutated records accepted, " << rejected << " rejected");
  CHECK(rejected > 1000);
  CHECK(accepted > 100);
}

TEST_CASE("each hostile piece as a whole record or as a message is rejected, never thrown") {
  for (const auto& piece : kHostilePieces) {
    CAPTURE(piece);
    for (const std::string& record : {piece, "{\"x\": " + piece + "}",
                                      R"({"conversations": [{"from": "human", "value": )" + piece +
                                          R"(}, {"from": "gpt", "value": "a"}]})"}) {
      std::variant<Conversation, RecordRejection> result;
      REQUIRE_NOTHROW(result = parse_conversation(record, "hostile.jsonl:1"));
      if (const auto* rejection = std::get_if<RecordRejection>(&result))
        CHECK(rejection->message.starts_with("hostile.jsonl:1: "));
    }
  }
}

}  // namespace odbatch
