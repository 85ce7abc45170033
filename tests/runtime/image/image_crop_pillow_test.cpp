// Decoding with a crop box (a record stage's) equals Pillow's crop then resize, on the real
// dataset's JPEG photos and PNG and WebP files made of some of them (pillow_crop_cases.py writes
// them and Pillow's checksums as a CTest fixture); a crop outside the image is a bad_geometry
// error naming it.
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "odbatch/image/image_crop.hpp"
#include "odbatch/image/image_processor.hpp"

namespace odbatch {
namespace {

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a cropped decode is Pillow's crop then bicubic resize") {
  std::ifstream cases(ODBATCH_PILLOW_CROP_CASES);
  REQUIRE_MESSAGE(cases, "no cases at " ODBATCH_PILLOW_CROP_CASES);
  VisionGeometryConfig geometry;
  geometry.min_pixels = 56 * 56;
  geometry.max_pixels = 28 * 28 * 1280;
  ImageProcessor processor({}, geometry, {});
  int checked = 0;
  for (std::string line; std::getline(cases, line);) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string path;
    ImageCrop crop;
    std::uint32_t target_width = 0, target_height = 0;
    unsigned long crc = 0;
    fields >> path >> crop.x >> crop.y >> crop.width >> crop.height >> target_width >>
        target_height >> crc;
    CAPTURE(line);
    // Relative: a photo of the dataset; absolute: a PNG or WebP the fixture wrote.
    const auto bytes = file_bytes(std::filesystem::path(ODBATCH_DATASET_IMAGES_DIR) / path);
    DecodedImage image;
    const auto error = processor.process(bytes, image, crop);
    REQUIRE_MESSAGE(!error, error->message);
    CHECK(image.width == target_width);
    CHECK(image.height == target_height);
    CHECK(image.decoded_width == crop.width);
    CHECK(image.crop == crop);
    CHECK(crc32(0, image.rgb.data(), static_cast<uInt>(image.rgb.size())) == crc);
    ++checked;
  }
  CHECK(checked >= 72 + 24);
}

TEST_CASE("a crop outside the image is a bad_geometry error naming both") {
  CHECK(!crop_problem({0, 0, 10, 10}, 10, 10));
  CHECK(!crop_problem({9, 9, 1, 1}, 10, 10));
  for (const ImageCrop crop : {ImageCrop{0, 0, 0, 5}, ImageCrop{10, 0, 1, 1}, ImageCrop{5, 5, 6, 1},
                               ImageCrop{0, 9, 1, 2}, ImageCrop{4294967295u, 0, 2, 1}}) {
    const auto problem = crop_problem(crop, 10, 10);
    REQUIRE(problem);
    CHECK(problem->kind == ImageErrorKind::bad_geometry);
    CHECK(problem->message.find("10x10 image") != std::string::npos);
  }
}

}  // namespace odbatch
