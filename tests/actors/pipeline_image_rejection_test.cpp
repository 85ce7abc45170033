// A JPEG whose header is sound but whose data is cut short passes the reader's header check and
// is rejected by an image decoder worker; that rejection must name the record's file:line and the
// image path, as the reader's rejections do.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path.string());
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

test::SftRecord image_record(const std::string& path) {
  return {R"({"conversations": [{"from": "human", "value": "<image>\nWhat does it show?"}, )"
          R"({"from": "gpt", "value": "A photo."}], "image": ")" +
              path + R"("})",
          1, false};
}

}  // namespace

TEST_CASE("a JPEG cut short is rejected by its decoder naming the record's file:line and image") {
  const auto data = test::require_dataset();
  const test::TempDir dir;
  const auto images = dir.path() / "images";
  std::filesystem::create_directories(images / "cut");
  const auto photo = file_bytes(data / "images" / "sklearn" / "china.jpg");
  std::ofstream(images / "whole.jpg", std::ios::binary)
      .write(photo.data(), static_cast<std::streamsize>(photo.size()));
  // The first half keeps the header whole, so only decoding finds the data missing.
  std::ofstream(images / "cut" / "china.jpg", std::ios::binary)
      .write(photo.data(), static_cast<std::streamsize>(photo.size() / 2));

  auto records = test::text_records(2);
  records.push_back(image_record("whole.jpg"));
  records.push_back(image_record("cut/china.jpg"));  // line 4, sample id 3
  const auto file = dir.path() / "cut.jsonl";
  test::write_jsonl(file, records);
  auto config = test::small_config({file});
  config.source.image_root = images;

  const auto ledger_file = dir.path() / "ledger.jsonl";
  Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger_file});
  pipeline.start_epoch(0);
  std::set<SampleId> emitted;
  for (const auto& batch : test::drain(pipeline))
    for (const auto id : batch->step_info().sample_ids) emitted.insert(id);
  CHECK(emitted == std::set<SampleId>{0, 1, 2});

  const auto ledger = test::read_ledger(ledger_file, 0);
  REQUIRE(ledger.rejected.size() == 1);
  const Rejection& rejection = ledger.rejected.front();
  CAPTURE(rejection.detail);
  CHECK(rejection.id == 3);
  CHECK(rejection.reason == "corrupt");
  const std::string location = file.string() + ":4: image cut/china.jpg: ";
  CHECK(rejection.detail.rfind(location, 0) == 0);
  // The decoder's words, not the header check's: this stage rejected it.
  CHECK(rejection.detail.find("decoding the JPEG at ") != std::string::npos);
  CHECK(rejection.detail.find("Premature end of JPEG file") != std::string::npos);
}

}  // namespace odbatch
