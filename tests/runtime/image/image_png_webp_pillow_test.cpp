// PNG and WebP against Pillow on the dataset's photos: every variant pillow_png_webp_cases.py
// writes (RGB with and without tRNS, RGBA, LA, L, 1-bit and 2-bit grey, palette with and without
// tRNS, 16-bit RGB, grey and LA, interlaced and animated PNGs;
// lossless, lossy, alpha and animated WebPs) decodes through ImageDecoder to the bytes of
// Pillow 9.4's Image.open(f).convert("RGB"), whole and resized with BICUBIC to smart_resize's
// size; their float32 pixel_values, written from the resize's bands, equal the writer's over those
// bytes. A CTest fixture runs the script first.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_processor.hpp"
#include "odbatch/image/pixel_values_writer.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct PillowCase {
  std::string file;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t rgb_crc = 0;
  VisionGeometryConfig geometry;
  std::uint32_t target_width = 0;
  std::uint32_t target_height = 0;
  std::uint32_t resized_crc = 0;
};

std::vector<PillowCase> read_cases() {
  const std::string path = ODBATCH_PNG_WEBP_CASES_DIR "/cases.tsv";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::vector<PillowCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    PillowCase c;
    std::getline(fields, c.file, '\t');
    fields >> c.width >> c.height >> c.rgb_crc >> c.geometry.min_pixels >> c.geometry.max_pixels >>
        c.target_width >> c.target_height >> c.resized_crc;
    REQUIRE_MESSAGE(fields, "malformed line: " << line);
    cases.push_back(c);
  }
  return cases;
}

Bytes read_file(const std::string& name) {
  const std::string path = ODBATCH_PNG_WEBP_CASES_DIR "/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::uint32_t crc32_of(const std::vector<std::uint8_t>& bytes) {
  return static_cast<std::uint32_t>(
      crc32(0, bytes.data(), static_cast<unsigned int>(bytes.size())));
}

// "00-frame_000100.p-trns.png" -> "p-trns.png"
std::string variant_of(const std::string& file) {
  const auto dot = file.find('.');
  return dot == std::string::npos ? file : file.substr(dot + 1);
}

}  // namespace

TEST_CASE("every PNG and WebP variant decodes and resizes to Pillow's exact bytes") {
  const std::vector<PillowCase> cases = read_cases();
  REQUIRE(cases.size() >= 18 * 3 * 20);  // 18 variants, 3 geometries, about 24 photos
  ImageDecoder decoder;
  std::map<std::string, int> checked;
  std::map<std::string, int> failed;
  for (const PillowCase& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.geometry.max_pixels);
    const Bytes bytes = read_file(c.file);
    const auto header = decoder.read_header(bytes);
    REQUIRE_MESSAGE(header, header.error().message);
    CHECK(header.value().width == c.width);
    CHECK(header.value().height == c.height);
    CHECK(header.value().frames == (variant_of(c.file).rfind("animated", 0) == 0 ? 2u : 1u));
    const auto decoded = decoder.decode(bytes, c.geometry);
    REQUIRE_MESSAGE(decoded, decoded.error().message);
    const DecodedImage& image = decoded.value();
    CHECK(image.source_width == c.width);
    CHECK(image.source_height == c.height);
    REQUIRE(image.width == c.target_width);
    REQUIRE(image.height == c.target_height);
    // The first geometry keeps the (multiple-of-28) photo whole: its bytes are convert("RGB").
    if (c.target_width == c.width && c.target_height == c.height) CHECK(c.resized_crc == c.rgb_crc);
    const bool same = crc32_of(image.rgb) == c.resized_crc;
    CHECK_MESSAGE(same, "pixels differ from Pillow's");
    PixelValuesConfig float32;
    float32.dtype = PixelDtype::float32;
    const PixelValuesWriter writer(float32, c.geometry);
    std::vector<std::uint8_t> expected(writer.bytes_for(image.width, image.height));
    writer.write(image.rgb, image.width, image.height, expected);
    ImageProcessor processor({}, c.geometry, float32);
    const auto values = processor.process(bytes);
    REQUIRE_MESSAGE(values, values.error().message);
    CHECK(values.value().rgb.empty());
    const auto& made = values.value().patch_values;
    CHECK_MESSAGE(Bytes(made.begin(), made.end()) == expected,
                  "pixel_values differ from the writer's");
    ++checked[variant_of(c.file)];
    if (!same) ++failed[variant_of(c.file)];
  }
  for (const auto& [variant, count] : checked) MESSAGE(variant << ": " << count << " cases");
  CHECK(failed.empty());
  CHECK(checked.size() == 18);
}

}  // namespace odbatch
