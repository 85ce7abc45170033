// PNG and WebP images through the whole pipeline: records referencing a .png, a .webp, a PNG
// named .jpg (the bytes decide, not the name) and a GIF named .png. The first three are emitted
// with the grid and the exact pixels Pillow gives for them (convert("RGB"), BICUBIC to
// smart_resize's size; the image.pillow_png_webp_cases fixture wrote the files and Pillow's
// checksums); the GIF is rejected as unsupported, naming the record's file:line and what it saw.
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

const std::filesystem::path kCases = ODBATCH_PNG_WEBP_CASES_DIR;
// The fixture's third geometry: at most 64 visual tokens an image.
constexpr std::uint64_t kMinPixels = 4 * 28 * 28;
constexpr std::uint64_t kMaxPixels = 64 * 28 * 28;

// (grid_h, grid_w, CRC-32 of the resized RGB), as Pillow gives them.
using Expected = std::tuple<std::int32_t, std::int32_t, std::uint32_t>;

Expected pillow_expects(const std::string& file) {
  std::ifstream in(kCases / "cases.tsv");
  REQUIRE_MESSAGE(in, "cannot read " << (kCases / "cases.tsv").string());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::uint32_t width = 0, height = 0, rgb_crc = 0, target_width = 0, target_height = 0;
    std::uint32_t resized_crc = 0;
    std::uint64_t min_pixels = 0, max_pixels = 0;
    std::getline(fields, name, '\t');
    fields >> width >> height >> rgb_crc >> min_pixels >> max_pixels >> target_width >>
        target_height >> resized_crc;
    if (name == file && min_pixels == kMinPixels && max_pixels == kMaxPixels)
      return {static_cast<std::int32_t>(target_height / 14),
              static_cast<std::int32_t>(target_width / 14), resized_crc};
  }
  FAIL("no Pillow case for " << file);
  return {};
}

test::SftRecord image_record(const std::string& path) {
  return {R"({"conversations": [{"from": "human", "value": "<image>\nWhat does it show?"}, )"
          R"({"from": "gpt", "value": "A photo."}], "image": ")" +
              path + R"("})",
          1, false};
}

}  // namespace

TEST_CASE("PNG and WebP records go through the pipeline with Pillow's grid and pixels") {
  test::require_dataset();
  const test::TempDir dir;
  const auto images = dir.path() / "images";
  std::filesystem::create_directories(images);
  const std::map<std::string, std::string> copies = {
      {"photo.png", "00-2007_007763.rgba.png"},
      {"photo.webp", "16-aitzgorri_by_Aitzol_Berasategi.lossy.webp"},
      {"png_named.jpg", "11-frame_000100.la.png"},
  };
  std::multiset<Expected> expected;
  for (const auto& [name, source] : copies) {
    std::filesystem::copy_file(kCases / source, images / name);
    expected.insert(pillow_expects(source));
  }
  const std::string gif("GIF89a\x01\x00\x01\x00", 10);  // a GIF's header, 1x1
  std::ofstream(images / "gif_named.png", std::ios::binary).write(gif.data(), 10);

  auto records = test::text_records(2);
  for (const char* name : {"photo.png", "photo.webp", "png_named.jpg", "gif_named.png"})
    records.push_back(image_record(name));  // lines 3 to 6, sample ids 2 to 5
  const auto file = dir.path() / "formats.jsonl";
  test::write_jsonl(file, records);
  auto config = test::small_config({file});
  config.source.image_root = images;
  config.images.geometry.min_pixels = kMinPixels;
  config.images.geometry.max_pixels = kMaxPixels;

  const auto ledger_file = dir.path() / "ledger.jsonl";
  Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger_file});
  pipeline.start_epoch(0);
  std::set<SampleId> emitted;
  std::multiset<Expected> seen;
  for (const auto& batch : test::drain(pipeline)) {
    for (const auto id : batch->step_info().sample_ids) emitted.insert(id);
    const auto grids = batch->image_grid_thw();
    const auto pixels = batch->pixel_values();
    std::size_t at = 0;
    for (std::size_t i = 0; i < grids.size(); i += 3) {
      const std::size_t bytes = std::size_t(grids[i + 1]) * grids[i + 2] * 14 * 14 * 3;
      REQUIRE(at + bytes <= pixels.size());
      seen.insert({grids[i + 1], grids[i + 2],
                   static_cast<std::uint32_t>(
                       crc32(0, pixels.data() + at, static_cast<unsigned int>(bytes)))});
      at += bytes;
    }
  }
  CHECK(emitted == std::set<SampleId>{0, 1, 2, 3, 4});
  CHECK(seen == expected);

  const auto ledger = test::read_ledger(ledger_file, 0);
  REQUIRE(ledger.rejected.size() == 1);
  const Rejection& rejection = ledger.rejected.front();
  CHECK(rejection.id == 5);
  CHECK(rejection.reason == "unsupported");
  CHECK(rejection.detail == file.string() +
                                ":6: image gif_named.png: not a JPEG, PNG or WebP image: a GIF "
                                "image, starts with 0x47 0x49 0x46 0x38 0x39 0x61 0x01 0x00");
}

}  // namespace odbatch
