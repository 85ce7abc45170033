// LLaVA-style JSON array files: elements indexed like JSONL lines (alone and mixed with JSONL
// files), read back and parsed, located as "path[element]@offset"; a broken element is rejected
// alone while a break in the array's structure fails indexing at its byte; and the real dataset
// converted to JSON arrays (the odbatch_json_array_dataset fixture) reads as the same records.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "odbatch/core/split_mix64.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/json_array_scanner.hpp"
#include "odbatch/source/record_reader.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

const std::filesystem::path kDataDir = ODBATCH_DATA_DIR;
const std::filesystem::path kJsonArrayDir = ODBATCH_JSON_ARRAY_DIR;

std::shared_ptr<const DatasetIndex> index_of(const std::vector<std::string>& paths) {
  return std::make_shared<const DatasetIndex>(DatasetIndex::build(paths));
}

// The elements' texts as the index locates them in `content`.
std::vector<std::string> element_texts(const DatasetIndex& index, const std::string& content) {
  std::vector<std::string> texts;
  for (SampleId id = 0; id < index.record_count(); ++id) {
    const auto location = index.locate(id);
    texts.push_back(content.substr(location.offset, location.length));
  }
  return texts;
}

// The (offset, length) pairs the scanner reports for `content` fed in pieces of `piece` bytes.
std::vector<std::pair<std::uint64_t, std::uint64_t>> scan_in_pieces(std::string_view content,
                                                                    std::size_t piece) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> elements;
  JsonArrayScanner scanner("test.json", [&](std::uint64_t offset, std::uint64_t length) {
    elements.emplace_back(offset, length);
  });
  for (std::size_t at = 0; at < content.size(); at += piece)
    scanner.feed(content.substr(at, piece), at);
  scanner.finish();
  return elements;
}

std::string error_of(const std::vector<std::string>& paths) {
  try {
    DatasetIndex::build(paths);
  } catch (const DatasetError& e) {
    return e.what();
  }
  FAIL("indexing succeeded");
  return {};
}

std::variant<Conversation, RecordRejection> parsed(const RecordReader& reader, SampleId id) {
  auto read = reader.read(id);
  REQUIRE(std::holds_alternative<Record>(read));
  const auto& record = std::get<Record>(read);
  return parse_conversation(record.text, record.where());
}

RecordRejection rejection_of(const RecordReader& reader, SampleId id) {
  auto result = parsed(reader, id);
  REQUIRE(std::holds_alternative<RecordRejection>(result));
  return std::get<RecordRejection>(std::move(result));
}

std::string conversation(const std::string& id, const std::string& answer) {
  return R"({"id": ")" + id +
         R"(", "conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": ")" +
         answer + R"("}]})";
}

std::size_t below(SplitMix64& rng, std::size_t bound) {
  return static_cast<std::size_t>(rng.next() % bound);
}

// A random JSON value whose strings are full of what the scanner must step over: quotes,
// backslashes, brackets, commas, control characters and non-ASCII text.
nlohmann::json random_value(SplitMix64& rng, int depth) {
  static const std::vector<std::string> kPieces = {"\"", "\\", "[",  "]",           "{", "}",   ",",
                                                   "a",  "\n", "\t", "caf\xc3\xa9", " ", "\\\""};
  auto random_string = [&] {
    std::string text;
    for (std::size_t i = below(rng, 6); i > 0; --i) text += kPieces[below(rng, kPieces.size())];
    return text;
  };
  switch (depth > 3 ? below(rng, 3) : below(rng, 5)) {
    case 0:
      return random_string();
    case 1:
      return static_cast<double>(below(rng, 1000)) - 500.5;
    case 2:
      return below(rng, 2) == 0 ? nlohmann::json(nullptr) : nlohmann::json(true);
    case 3: {
      auto array = nlohmann::json::array();
      for (std::size_t i = below(rng, 4); i > 0; --i) array.push_back(random_value(rng, depth + 1));
      return array;
    }
    default: {
      auto object = nlohmann::json::object();
      for (std::size_t i = below(rng, 4); i > 0; --i)
        object[random_string()] = random_value(rng, depth + 1);
      return object;
    }
  }
}

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("a JSON array's elements are its records: strings, escapes and nesting followed") {
  test::ScratchDirectory dir;
  // Commas and brackets inside strings, escaped quotes and backslashes, nested arrays, scalars.
  const std::string content =
      " \n[ {\"a\": \"x, ]\\\" }\", \"b\": [1, [2, {}]]} ,\n"
      "  {\"c\": \"\\\\\"}\t,[\"[\"],\"s\" , 12 ,{}\n]\n ";
  const auto path = dir.write("mix.json", content);
  const auto index = index_of({path});

  REQUIRE(index->files().size() == 1);
  CHECK(index->files()[0].format == DatasetFileFormat::json_array);
  CHECK(element_texts(*index, content) ==
        std::vector<std::string>{"{\"a\": \"x, ]\\\" }\", \"b\": [1, [2, {}]]}",
                                 "{\"c\": \"\\\\\"}", "[\"[\"]", "\"s\"", "12", "{}"});
  CHECK(index->locate(0) == RecordLocation{0, 4, 36, 0, 0});
  CHECK(index->describe(1) == path + "[1]@45");
  CHECK(index->files()[0].record_count == 6);
  CHECK(index->files()[0].size_bytes == content.size());
}

TEST_CASE("element boundaries do not depend on where the buffer fills split the file") {
  // Runs of backslashes before quotes: odd runs escape the quote, even runs do not.
  const std::string content =
      R"([{"k": "a\\\"b,", "n": [[], {"x": "]}"}]}, "\\", "\\\\", "\\\"]", 7 , [ ], , {}])";
  const auto whole = scan_in_pieces(content, content.size());
  std::vector<std::string> texts;
  for (const auto& [offset, length] : whole) texts.push_back(content.substr(offset, length));
  CHECK(texts == std::vector<std::string>{R"({"k": "a\\\"b,", "n": [[], {"x": "]}"}]})", R"("\\")",
                                          R"("\\\\")", R"("\\\"]")", "7", "[ ]", "", "{}"});
  CHECK(whole[6] == std::pair<std::uint64_t, std::uint64_t>{content.find(", , ") + 2, 0});
  for (std::size_t piece = 1; piece < 8; ++piece) {
    CAPTURE(piece);
    CHECK(scan_in_pieces(content, piece) == whole);
  }
}

TEST_CASE(
    "random JSON arrays split into exactly their elements, mutated ones fail or stay in order") {
  SplitMix64 rng(20261204);
  const std::vector<std::string> separators = {",", " , ", ",\n  ", "\r\n,\t"};
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    std::vector<std::string> dumps;
    std::string content = below(rng, 2) == 0 ? "[" : " \n[\n  ";
    for (std::size_t i = below(rng, 8); i > 0; --i) {
      const auto value = random_value(rng, 0);
      dumps.push_back(below(rng, 2) == 0 ? value.dump() : value.dump(2));
      if (dumps.size() > 1) content += separators[below(rng, separators.size())];
      content += dumps.back();
    }
    content += below(rng, 2) == 0 ? "]" : "\n]\n";
    std::vector<std::string> texts;
    for (const auto& [offset, length] : scan_in_pieces(content, 1 + below(rng, 64)))
      texts.push_back(content.substr(offset, length));
    CHECK(texts == dumps);

    // A few bytes replaced: indexing fails with its error, or the elements it finds lie in order
    // inside the array and none overlaps the next.
    auto mutated = content;
    constexpr std::string_view kReplacements("\"\\[]{},x \xff\0", 11);
    for (std::size_t i = 1 + below(rng, 3); i > 0; --i)
      mutated[below(rng, mutated.size())] = kReplacements[below(rng, kReplacements.size())];
    try {
      std::uint64_t previous_end = 0;
      for (const auto& [offset, length] : scan_in_pieces(mutated, 1 + below(rng, 64))) {
        CHECK(offset >= previous_end);
        CHECK(offset + length <= mutated.size());
        previous_end = offset + length;
      }
    } catch (const DatasetError& e) {
      CHECK(std::string(e.what()).starts_with("test.json: JSON array"));
    }
  }
}

TEST_CASE("records read from a JSON array, with their element and byte offset") {
  test::ScratchDirectory dir;
  const std::string content =
      "[" + conversation("a", "one") + ",\n " + conversation("b", "two") + "]";
  const auto path = dir.write("train.json", content);
  const RecordReader reader(index_of({path}));

  auto read = reader.read(1);
  REQUIRE(std::holds_alternative<Record>(read));
  const auto& record = std::get<Record>(read);
  CHECK(record.text == conversation("b", "two"));
  CHECK(record.element == 1);
  CHECK(record.line == 0);
  CHECK(record.offset == content.find("{\"id\": \"b\""));
  CHECK(record.where() == path + "[1]@" + std::to_string(record.offset));
  const auto parsed_record = parse_conversation(record.text, record.where());
  REQUIRE(std::holds_alternative<Conversation>(parsed_record));
  CHECK(std::get<Conversation>(parsed_record).messages.back().content == "two");
}

TEST_CASE("JSON array and JSONL files mix in one dataset, an empty array adds no record") {
  test::ScratchDirectory dir;
  const auto lines = dir.write("a.jsonl", "{\"n\":0}\n\n{\"n\":1}\n");
  const auto array = dir.write("b.json", "[{\"n\":2}, {\"n\":3}]");
  const auto empty = dir.write("c.json", "[ \n ]\n");
  const auto after = dir.write("d.jsonl", "\n{\"n\":4}\n");
  // Content decides, not the name: a ".json" file of lines is JSONL, a ".jsonl" file of one
  // array (after a byte order mark) is an array.
  const auto lines_named_json = dir.write("e.json", "{\"n\":5}\n{\"n\":6}\n");
  const auto array_named_jsonl = dir.write("f.jsonl", "\xef\xbb\xbf [{\"n\":7}]");
  const auto index = index_of({lines, array, empty, after, lines_named_json, array_named_jsonl});

  REQUIRE(index->record_count() == 8);
  const auto files = index->files();
  CHECK(files[0].format == DatasetFileFormat::json_lines);
  CHECK(files[1].format == DatasetFileFormat::json_array);
  CHECK(files[2].format == DatasetFileFormat::json_array);
  CHECK(files[2].record_count == 0);
  CHECK(files[4].format == DatasetFileFormat::json_lines);
  CHECK(files[5].format == DatasetFileFormat::json_array);
  CHECK(index->describe(1) == lines + ":3");
  CHECK(index->describe(3) == array + "[1]@10");
  CHECK(index->describe(4) == after + ":2");
  CHECK(index->describe(7) == array_named_jsonl + "[0]@5");
  const RecordReader reader(index);
  for (SampleId id = 0; id < index->record_count(); ++id) {
    auto read = reader.read(id);
    REQUIRE(std::holds_alternative<Record>(read));
    CHECK(std::get<Record>(read).text == "{\"n\":" + std::to_string(id) + "}");
  }
  CHECK(error_of({empty}).find("holds no records") != std::string::npos);
}

TEST_CASE("bad elements are rejected alone, located, in the middle of a large array") {
  test::ScratchDirectory dir;
  constexpr std::size_t kElements = 20000;
  // Elements whose brackets still balance: two objects without a comma, a missing comma between
  // keys, Latin-1 text, a number, an empty slot between commas; the last slot is a trailing comma.
  const std::vector<std::pair<std::size_t, std::string>> broken = {
      {5000, conversation("x", "a") + " " + conversation("y", "b")},
      {9000, R"({"id": "z" "conversations": []})"},
      {12000, conversation("latin1", "caf\xe9")},
      {15000, "42"},
      {17000, ""},
  };
  std::string content = "[";
  std::size_t next_broken = 0;
  for (std::size_t i = 0; i < kElements; ++i) {
    if (i > 0) content += ",\n";
    if (next_broken < broken.size() && broken[next_broken].first == i) {
      content += broken[next_broken++].second;
    } else {
      content += conversation(std::to_string(i), "answer " + std::to_string(i));
    }
  }
  content += ",]";
  const auto path = dir.write("big.json", content);
  const auto index = index_of({path});
  REQUIRE(index->record_count() == kElements + 1);
  const RecordReader reader(index);

  auto where = [&](SampleId id) { return index->describe(id) + ": "; };
  const auto merged = rejection_of(reader, 5000);
  CHECK(merged.reason == RecordRejectReason::malformed_json);
  CHECK(merged.message.starts_with(where(5000)));
  CHECK(where(5000) ==
        path + "[5000]@" + std::to_string(content.find(conversation("x", "a"))) + ": ");
  CHECK(rejection_of(reader, 9000).reason == RecordRejectReason::malformed_json);
  const auto latin1 = rejection_of(reader, 12000);
  CHECK(latin1.reason == RecordRejectReason::invalid_utf8);
  CHECK(latin1.message.starts_with(where(12000)));
  CHECK(rejection_of(reader, 15000).reason == RecordRejectReason::not_an_object);
  const auto empty_slot = rejection_of(reader, 17000);
  CHECK(empty_slot.reason == RecordRejectReason::malformed_json);
  CHECK(empty_slot.message.starts_with(where(17000)));
  CHECK(rejection_of(reader, kElements).reason == RecordRejectReason::malformed_json);

  // Every other element is read whole, in its place.
  std::size_t good = 0;
  for (SampleId id = 0; id < kElements; ++id) {
    auto result = parsed(reader, id);
    if (const auto* good_record = std::get_if<Conversation>(&result)) {
      CHECK(good_record->messages.back().content == "answer " + std::to_string(id));
      ++good;
    }
  }
  CHECK(good == kElements - broken.size());
}

TEST_CASE("a break in the array's structure fails indexing at its byte") {
  test::ScratchDirectory dir;
  const auto mismatched = dir.write("mismatched.json", "[{\"a\": 1}, {\"b\": [1, 2}, {\"c\": 3}]");
  CHECK(error_of({mismatched}) ==
        mismatched +
            ": JSON array, byte 22: '}' closes a '[' in element 1 (at byte 11); the elements after "
            "it cannot be told apart");
  const auto extra_close = dir.write("extra.json", "[{\"a\": 1}}, {}]");
  CHECK(error_of({extra_close})
            .starts_with(extra_close + ": JSON array, byte 9: '}' closes nothing"));

  const auto truncated = dir.write("truncated.json", "[{\"a\": 1},\n {\"b\": \"cut of");
  CHECK(error_of({truncated}) ==
        truncated +
            ": JSON array: the file ends before the array's closing ']' (opened at byte 0) after 1 "
            "complete elements; element 1 (at byte 12) is cut off inside a string (a truncated "
            "file?)");
  const auto unclosed = dir.write("unclosed.json", "[{\"a\": 1}, {\"b\": 2}\n");
  CHECK(error_of({unclosed}).find("ends before the array's closing ']'") != std::string::npos);

  const auto trailing = dir.write("trailing.json", "[{\"a\": 1}]\n{\"b\": 2}\n");
  CHECK(error_of({trailing}) ==
        trailing +
            ": JSON array, byte 11: found '{' after the array's closing ']'; only whitespace may "
            "follow (a file whose first byte besides whitespace is '[' is read as one "
            "JSON array)");
  const auto second_array = dir.write("two.json", "[{}] [{}]");
  CHECK(error_of({second_array}).starts_with(second_array + ": JSON array, byte 5: found '['"));

  const auto deep = dir.write("deep.json", std::string(JsonArrayScanner::kMaxNesting + 2, '['));
  CHECK(error_of({deep}).find("nests deeper than") != std::string::npos);
  // A good file before the broken one does not hide it.
  const auto good = dir.write("good.jsonl", "{\"a\": 1}\n");
  CHECK(error_of({good, truncated}).starts_with(truncated + ": "));
}

TEST_CASE("the real dataset as a JSON array reads as the same records as its JSONL") {
  const auto jsonl = kDataDir / "sft/sharegpt.jsonl";
  for (const auto& [name, stride] :
       {std::pair<std::string, std::size_t>{"sharegpt.json", 1}, {"sharegpt_every40.json", 40}}) {
    CAPTURE(name);
    const auto array_file = kJsonArrayDir / name;
    const std::string missing = array_file.string() +
                                " is missing: the ctest fixture source.json_array_dataset "
                                "writes it (ctest -R source)";
    REQUIRE_MESSAGE(std::filesystem::exists(array_file), missing);
    const auto lines = lines_of(jsonl);
    const RecordReader array_reader(index_of({array_file.string()}));
    const RecordReader lines_reader(index_of({jsonl.string()}));
    REQUIRE(array_reader.index().record_count() == (lines.size() + stride - 1) / stride);
    for (SampleId id = 0; id < array_reader.index().record_count(); ++id) {
      const auto from_array = parsed(array_reader, id);
      const auto from_lines = parsed(lines_reader, id * stride);
      REQUIRE(std::holds_alternative<Conversation>(from_array));
      REQUIRE(std::holds_alternative<Conversation>(from_lines));
      CHECK(std::get<Conversation>(from_array) == std::get<Conversation>(from_lines));
    }
  }
}

}  // namespace odbatch
