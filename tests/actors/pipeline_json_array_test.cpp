// The pipeline over a LLaVA-style JSON array: every 40th record of the real dataset's ShareGPT
// file, converted by tools/dataset/jsonl_to_json_array.py (the odbatch_json_array_dataset
// fixture), gives the very batches of the same records as JSONL, resumes exactly from a
// checkpoint, mixes with JSONL files in one source, and rejects a broken element in the middle of
// an array alone, located by element and byte offset in the ledger, with a clean audit.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/ledger.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using test::BatchExpectations;

const std::filesystem::path kDataDir = ODBATCH_DATA_DIR;
const std::filesystem::path kJsonArrayFile = ODBATCH_JSON_ARRAY_DIR "/sharegpt_every40.json";
constexpr std::size_t kStride = 40;  // the fixture's --stride

// The records the fixture converted: every 40th line of sharegpt.jsonl.
std::vector<std::string> sampled_lines() {
  std::ifstream in(kDataDir / "sft/sharegpt.jsonl", std::ios::binary);
  std::vector<std::string> lines;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line); ++number)
    if (number % kStride == 0) lines.push_back(line);
  REQUIRE(lines.size() > 300);
  return lines;
}

std::size_t image_count(const std::string& line) {
  const auto record = nlohmann::json::parse(line);
  if (record.contains("image")) return 1;
  if (record.contains("images")) return record["images"].size();
  return 0;
}

std::filesystem::path require_json_array() {
  test::require_dataset();
  if (!std::filesystem::exists(kJsonArrayFile))
    FAIL(kJsonArrayFile.string()
         << " is missing: the ctest fixture source.json_array_dataset writes it");
  return kJsonArrayFile;
}

using Epoch = test::EpochRun;
test::EpochRun run_epoch(const PipelineConfig& config, const std::filesystem::path& ledger) {
  return test::run_single_rank_epoch(config, ledger);
}

void write_jsonl(const std::filesystem::path& file, std::span<const std::string> lines) {
  std::ofstream out(file, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
  REQUIRE_MESSAGE(out.good(), "cannot write " << file.string());
}

}  // namespace

TEST_CASE("a JSON array gives the batches of the same records as JSONL, and resumes exactly") {
  const auto array_file = require_json_array();
  const test::TempDir dir;
  const auto lines = sampled_lines();
  const auto jsonl_file = dir.path() / "sampled.jsonl";
  write_jsonl(jsonl_file, lines);
  std::map<SampleId, std::size_t> images_per_sample;
  for (SampleId id = 0; id < lines.size(); ++id) images_per_sample[id] = image_count(lines[id]);

  auto array_config = test::small_config({array_file});
  array_config.images.workers = 2;
  auto jsonl_config = array_config;
  jsonl_config.source.files = {jsonl_file.string()};

  const auto from_array = run_epoch(array_config, dir.path() / "array-ledger.jsonl");
  const auto from_jsonl = run_epoch(jsonl_config, dir.path() / "jsonl-ledger.jsonl");
  const auto digests = test::batch_digests(from_array.batches);
  REQUIRE(digests.size() > 4);
  CHECK(digests == test::batch_digests(from_jsonl.batches));
  CHECK(from_array.ledger.steps == from_jsonl.ledger.steps);
  const auto report = test::check_and_audit(from_array, array_config, images_per_sample);
  CHECK(report.emitted + 5 >= lines.size());  // real records are nearly all good
  for (const auto& rejection : from_array.ledger.rejected) {
    CAPTURE(rejection.detail);
    CHECK(rejection.detail.starts_with(array_file.string() + "[" + std::to_string(rejection.id) +
                                       "]@"));
  }

  const std::uint64_t cut = digests.size() / 2;
  Checkpoint checkpoint;
  {
    Pipeline pipeline(array_config);
    pipeline.start_epoch(0);
    for (std::uint64_t i = 0; i < cut; ++i) REQUIRE(pipeline.next_batch());
    checkpoint = pipeline.state();
  }
  const auto resumed = Pipeline::resume(array_config, DistEnv::single(), checkpoint);
  CHECK(test::batch_digests(test::drain(*resumed)) ==
        std::vector<std::uint64_t>(digests.begin() + static_cast<std::ptrdiff_t>(cut),
                                   digests.end()));
}

TEST_CASE(
    "a JSON array and a JSONL file in one source: the steps of the same records as one JSONL") {
  test::require_dataset();
  const test::TempDir dir;
  const auto lines = sampled_lines();
  const std::size_t half = lines.size() / 2;
  const auto array_file = dir.path() / "first-half.json";
  {
    std::ofstream out(array_file, std::ios::binary);
    out << "[";
    for (std::size_t i = 0; i < half; ++i) out << (i > 0 ? ",\n" : "") << lines[i];
    out << "]";
  }
  const auto second_half = dir.path() / "second-half.jsonl";
  write_jsonl(second_half, std::span(lines).subspan(half));
  const auto whole = dir.path() / "whole.jsonl";
  write_jsonl(whole, lines);
  std::map<SampleId, std::size_t> images_per_sample;
  for (SampleId id = 0; id < lines.size(); ++id) images_per_sample[id] = image_count(lines[id]);

  auto mixed_config = test::small_config({array_file, second_half});
  mixed_config.images.workers = 2;
  auto whole_config = mixed_config;
  whole_config.source.files = {whole.string()};
  const auto mixed = run_epoch(mixed_config, dir.path() / "mixed-ledger.jsonl");
  const auto from_whole = run_epoch(whole_config, dir.path() / "whole-ledger.jsonl");
  test::check_and_audit(mixed, mixed_config, images_per_sample, {0, half});
  // The same ids in the same steps, and the same tokens: only the rows' source files differ.
  CHECK(mixed.ledger.steps == from_whole.ledger.steps);
  REQUIRE(mixed.batches.size() == from_whole.batches.size());
  for (std::size_t i = 0; i < mixed.batches.size(); ++i) {
    const auto a = mixed.batches[i]->input_ids();
    const auto b = from_whole.batches[i]->input_ids();
    CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
}

TEST_CASE(
    "broken elements in the middle of a JSON array are rejected alone, located in the ledger") {
  test::require_dataset();
  const test::TempDir dir;
  const auto lines = sampled_lines();
  // Two elements whose brackets balance but which are no records: a missing comma between keys,
  // and a number. The rest are the real records, pretty-printed around them.
  constexpr SampleId kMissingComma = 100;
  constexpr SampleId kNumber = 200;
  std::map<SampleId, std::size_t> images_per_sample;
  std::vector<std::string> elements;
  for (const auto& line : lines) {
    if (elements.size() == kMissingComma)
      elements.push_back(R"({"id": "broken" "conversations": []})");
    if (elements.size() == kNumber) elements.push_back("42");
    images_per_sample[elements.size()] = image_count(line);
    elements.push_back(nlohmann::json::parse(line).dump(2));
  }
  images_per_sample[kMissingComma] = 0;
  images_per_sample[kNumber] = 0;
  const auto array_file = dir.path() / "llava.json";
  std::vector<std::uint64_t> offsets;
  {
    std::ofstream out(array_file, std::ios::binary);
    std::string content = "[\n";
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) content += ",\n";
      offsets.push_back(content.size());
      content += elements[i];
    }
    out << content << "\n]\n";
  }

  auto config = test::small_config({array_file});
  config.images.workers = 2;
  const auto epoch = run_epoch(config, dir.path() / "ledger.jsonl");
  const auto report = test::check_and_audit(epoch, config, images_per_sample);
  CHECK(report.emitted + 5 >= lines.size());
  std::map<SampleId, Rejection> rejected;
  for (const auto& rejection : epoch.ledger.rejected) rejected[rejection.id] = rejection;
  for (const auto& [id, reason] :
       {std::pair<SampleId, std::string>{kMissingComma, "malformed_json"},
        {kNumber, "not_an_object"}}) {
    CAPTURE(id);
    REQUIRE(rejected.contains(id));
    CHECK(rejected[id].reason == reason);
    const auto where =
        array_file.string() + "[" + std::to_string(id) + "]@" + std::to_string(offsets[id]) + ": ";
    CHECK(rejected[id].detail.starts_with(where));
  }
}

}  // namespace odbatch
