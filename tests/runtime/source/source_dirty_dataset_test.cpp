// The dirty dataset (data/dirty, built by tools/dataset/build_dirty.py) against its EXPECTED.json:
// every line is indexed as a record or skipped as blank, and every record is accepted or rejected
// by the parser with the expected reason, for the reasons the parser decides. Reasons decided
// later (missing or corrupt images, pixel bombs, token lengths) must pass the parser.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/record_reader.hpp"
#include "test_skip.hpp"

namespace odbatch {
namespace {

const std::set<std::string, std::less<>> kParserReasons = {
    "invalid_utf8",  "malformed_json",    "not_an_object",        "missing_field",
    "wrong_type",    "bad_field",         "unknown_role",         "empty_conversation",
    "empty_content", "no_assistant_turn", "placeholder_mismatch", "bad_image_path"};

bool expected_reason(const nlohmann::json& entry, std::string_view reason) {
  if (entry.at("reason") == reason) return true;
  const auto also = entry.find("also_accepted");
  return also != entry.end() && std::find(also->begin(), also->end(), reason) != also->end();
}

}  // namespace

TEST_CASE("the dirty dataset is indexed and classified as EXPECTED.json says") {
  const std::filesystem::path dir = ODBATCH_DATA_DIR "/dirty";
  if (!std::filesystem::exists(dir / "dirty.jsonl") ||
      !std::filesystem::exists(dir / "EXPECTED.json")) {
    ODBATCH_SKIP_TEST("dataset", dir.string() << " has no dirty.jsonl and EXPECTED.json (build it "
                                                 "with tools/dataset/build_dirty.py)");
  }
  const auto expected = nlohmann::json::parse(std::ifstream(dir / "EXPECTED.json"));
  const auto index = std::make_shared<const DatasetIndex>(
      DatasetIndex::build(std::vector<std::string>{(dir / "dirty.jsonl").string()}));
  const RecordReader reader(index);
  REQUIRE(index->record_count() == expected.at("records").get<std::uint64_t>());

  std::map<std::uint64_t, SampleId> record_on_line;
  for (SampleId id = 0; id < index->record_count(); ++id) {
    record_on_line[index->locate(id).line] = id;
  }
  int checked = 0;
  int placed_by_convention = 0;
  for (const auto& entry : expected.at("expected")) {
    const auto line = entry.at("line").get<std::uint64_t>();
    const std::string status = entry.at("status");
    CAPTURE(line);
    if (status == "ignored") {
      CHECK(record_on_line.count(line) == 0);
      continue;
    }
    REQUIRE(record_on_line.count(line) == 1);
    const SampleId id = record_on_line[line];
    CHECK(id == entry.at("record").get<SampleId>());

    const auto read = reader.read(id);
    REQUIRE(std::holds_alternative<Record>(read));
    const auto& record = std::get<Record>(read);
    const auto parsed = parse_conversation(record.text, record.where());
    const auto* rejection = std::get_if<RecordRejection>(&parsed);
    CAPTURE(rejection == nullptr ? std::string("accepted") : rejection->message);
    ++checked;

    const bool parser_decides =
        status == "bad" && kParserReasons.count(std::string(entry.at("reason"))) != 0;
    // Images without any placeholder are placed at the start of the first user message (LLaVA's
    // convention), where EXPECTED.json counts them as a placeholder mismatch.
    if (parser_decides && entry.at("reason") == "placeholder_mismatch" &&
        record.text.find(kImagePlaceholder) == std::string::npos) {
      REQUIRE(rejection == nullptr);
      const auto& messages = std::get<Conversation>(parsed).messages;
      const auto first_user = std::find_if(messages.begin(), messages.end(),
                                           [](const Message& m) { return m.role == Role::user; });
      REQUIRE(first_user != messages.end());
      CHECK(first_user->content.starts_with("<image>\n"));
      ++placed_by_convention;
      continue;
    }
    if (parser_decides) {
      REQUIRE(rejection != nullptr);
      CHECK(expected_reason(entry, to_string(rejection->reason)));
      CHECK(rejection->message.starts_with(record.where() + ": "));
    } else {
      REQUIRE(rejection == nullptr);
      if (status == "good") {
        CHECK(std::get<Conversation>(parsed).images.size() == entry.at("images").size());
      }
    }
  }
  CHECK(checked == expected.at("records").get<int>());
  MESSAGE(checked << " records checked; " << placed_by_convention
                  << " with images but no placeholder accepted by LLaVA's convention");
}

}  // namespace odbatch
