// By default the image stage gives the Hugging Face processor's exact pixels: every JPEG photo
// of the dataset, at Qwen2-VL's default max_pixels and at its preprocessor_config.json's
// (12,845,056), against Pillow's full decode and BICUBIC resize and the numpy reimplementation
// of Qwen2VLImageProcessor (processor_exact_pixels_cases.py, run first as a CTest fixture):
// uint8 RGB and float32 pixel_values byte for byte. With jpeg_dct_scaling the geometry is the
// same and the pixels of the large photos differ, as documented.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "odbatch/image/image_processor.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct ProcessorCase {
  std::string path;
  VisionGeometryConfig geometry;
  std::uint32_t target_width = 0;
  std::uint32_t target_height = 0;
  std::uint32_t rgb_crc = 0;
  std::uint32_t float32_crc = 0;
};

std::vector<ProcessorCase> read_cases() {
  std::ifstream in(ODBATCH_PROCESSOR_PIXELS_CASES);
  REQUIRE_MESSAGE(in, "cannot read " << ODBATCH_PROCESSOR_PIXELS_CASES);
  std::vector<ProcessorCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ProcessorCase c;
    std::getline(fields, c.path, '\t');
    fields >> c.geometry.min_pixels >> c.geometry.max_pixels >> c.target_width >> c.target_height >>
        c.rgb_crc >> c.float32_crc;
    REQUIRE_MESSAGE(fields, "malformed line: " << line);
    cases.push_back(c);
  }
  return cases;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::uint32_t crc32_of(std::span<const std::uint8_t> bytes) {
  return static_cast<std::uint32_t>(
      crc32(0, bytes.data(), static_cast<unsigned int>(bytes.size())));
}

PixelValuesConfig with_dtype(PixelDtype dtype) {
  PixelValuesConfig config;
  config.dtype = dtype;
  return config;
}

// The processed image, or a failed check naming its error.
DecodedImage processed(ImageProcessor& processor, const Bytes& jpeg) {
  auto image = processor.process(jpeg);
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return std::move(image).value();
}

}  // namespace

TEST_CASE("by default every photo's pixels equal the processor's, uint8 and float32") {
  const std::vector<ProcessorCase> cases = read_cases();
  // 240 photos at two geometries: fewer means the dataset or the script broke.
  REQUIRE(cases.size() >= 480);
  std::size_t enlarged_sources = 0;
  std::size_t dct_differs = 0;
  for (const ProcessorCase& c : cases) {
    CAPTURE(c.path);
    CAPTURE(c.geometry.max_pixels);
    const Bytes jpeg = read_file(std::string(ODBATCH_DATASET_IMAGES_DIR) + "/" + c.path);

    ImageProcessor uint8({}, c.geometry, with_dtype(PixelDtype::uint8));
    const DecodedImage rgb = processed(uint8, jpeg);
    CHECK(rgb.width == c.target_width);
    CHECK(rgb.height == c.target_height);
    CHECK(rgb.dct_scale == DctScale{1, 1});
    CHECK(crc32_of(rgb.rgb) == c.rgb_crc);
    enlarged_sources += rgb.source_width * rgb.source_height > 1'003'520 ? 1 : 0;

    ImageProcessor float32({}, c.geometry, with_dtype(PixelDtype::float32));
    CHECK(crc32_of(processed(float32, jpeg).patch_values) == c.float32_crc);

    JpegDecoderLimits scaled;
    scaled.jpeg_dct_scaling = true;
    ImageProcessor fast(scaled, c.geometry, with_dtype(PixelDtype::uint8));
    const DecodedImage approximate = processed(fast, jpeg);
    CHECK(approximate.grid == rgb.grid);
    dct_differs += crc32_of(approximate.rgb) != c.rgb_crc ? 1 : 0;
  }
  // Photos over the default max_pixels are shrunk, which DCT scaling does partly while decoding:
  // their pixels differ from the processor's.
  CHECK(enlarged_sources > 0);
  CHECK(dct_differs > 0);
  MESSAGE(dct_differs << " of " << cases.size() << " cases differ with jpeg_dct_scaling");
}

}  // namespace odbatch
