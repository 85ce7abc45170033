// Four-component JPEGs (CMYK, and YCCK as TurboJPEG writes them) against Pillow 9.4's pixels for
// the same files, which data/cmyk_jpegs/make_cmyk_jpegs.py made and describes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "image_test_jpegs.hpp"
#include "odbatch/image/jpeg_decoder.hpp"

namespace odbatch {
namespace {

using test::Bytes;

Bytes test_file(const std::string& name) {
  const auto path = std::filesystem::path(ODBATCH_CMYK_TEST_JPEGS_DIR) / name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `dct_scaling`: whether the decoder may decode at a reduced DCT scale.
DecodedImage decoded(const Bytes& jpeg, const VisionGeometryConfig& geometry = {},
                     bool dct_scaling = false) {
  JpegDecoderLimits limits;
  limits.jpeg_dct_scaling = dct_scaling;
  JpegDecoder decoder(limits);
  auto image = decoder.decode(jpeg, geometry);
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return std::move(image).value();
}

// Equal pixels, or a failure naming the first pixel that differs.
void check_pixels(const DecodedImage& image, const Bytes& expected) {
  REQUIRE(image.rgb.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (image.rgb[i] == expected[i]) continue;
    const std::size_t pixel = i / 3;
    FAIL("pixel (" << pixel % image.width << ", " << pixel / image.width << ") channel " << i % 3
                   << " is " << int{image.rgb[i]} << ", Pillow has " << int{expected[i]});
  }
}

JpegColorspace colorspace_of(const Bytes& jpeg) {
  JpegDecoder decoder;
  const auto header = decoder.read_header(jpeg);
  REQUIRE_MESSAGE(header.ok(), header.error().message);
  CHECK(header.value().components == 3);  // decoded as RGB
  return header.value().colorspace;
}

}  // namespace

TEST_CASE("CMYK and YCCK JPEGs decode to Pillow's convert(\"RGB\"), byte for byte") {
  const Bytes cmyk = test_file("cmyk_84x56.jpg");
  CHECK(colorspace_of(cmyk) == JpegColorspace::cmyk);
  const DecodedImage from_cmyk = decoded(cmyk);
  CHECK(from_cmyk.dct_scale == DctScale{1, 1});
  CHECK(from_cmyk.width == 84);  // its own target size: decoded, not resized
  CHECK(from_cmyk.height == 56);
  check_pixels(from_cmyk, test_file("cmyk_84x56.rgb"));

  const Bytes ycck = test_file("ycck_84x56.jpg");
  CHECK(colorspace_of(ycck) == JpegColorspace::ycck);
  check_pixels(decoded(ycck), test_file("ycck_84x56.rgb"));
}

TEST_CASE("a CMYK JPEG without an Adobe marker is read as inverted CMYK all the same") {
  const Bytes unmarked = test::without_segment(test_file("cmyk_84x56.jpg"), 0xEE);
  CHECK(colorspace_of(unmarked) == JpegColorspace::cmyk);
  check_pixels(decoded(unmarked), test_file("cmyk_84x56.rgb"));
}

TEST_CASE("a CMYK JPEG resized to its target matches Pillow's convert then BICUBIC resize") {
  VisionGeometryConfig geometry;
  geometry.min_pixels = 10'584;  // 126x84 pixels, so smart_resize enlarges 84x56 to 140x84
  const DecodedImage image = decoded(test_file("cmyk_84x56.jpg"), geometry);
  CHECK(image.dct_scale == DctScale{1, 1});
  CHECK(image.width == 140);
  CHECK(image.height == 84);
  check_pixels(image, test_file("cmyk_84x56_to_140x84.rgb"));
}

TEST_CASE("a YCCK JPEG decoded at 1/2 matches Pillow's draft at 1/2, then convert") {
  VisionGeometryConfig geometry;
  geometry.max_pixels = 4'704;  // smart_resize(112, 168) = 56x84, exactly the 1/2 decode
  const DecodedImage image = decoded(test_file("ycck_168x112.jpg"), geometry, true);
  CHECK(image.dct_scale == DctScale{1, 2});
  CHECK(image.width == 84);
  CHECK(image.height == 56);
  check_pixels(image, test_file("ycck_168x112_draft_half.rgb"));
}

TEST_CASE("a flat CMYK photo stays flat through a full or reduced decode and resize") {
  // Every stored sample 0x40: white = 64, ink = 191, so each colour is 64 - 48 = 16.
  for (const bool dct_scaling : {false, true}) {
    CAPTURE(dct_scaling);
    const DecodedImage image = decoded(test::encode_cmyk_jpeg(1600, 1200), {}, dct_scaling);
    // Reduced: 1200x900, then resized.
    CHECK(image.dct_scale == (dct_scaling ? DctScale{3, 4} : DctScale{1, 1}));
    CHECK(image.width == 1148);  // smart_resize(1200, 1600) = 840x1148
    CHECK(image.height == 840);
    for (std::size_t i = 0; i < image.rgb.size(); ++i) REQUIRE(image.rgb[i] == 16);
  }
}

TEST_CASE("a truncated YCCK JPEG is corrupt") {
  Bytes jpeg = test_file("ycck_168x112.jpg");
  jpeg.resize(jpeg.size() / 2);
  JpegDecoder decoder;
  const auto image = decoder.decode(jpeg, {});
  REQUIRE_FALSE(image.ok());
  CHECK(image.error().kind == ImageErrorKind::corrupt);
  CHECK(image.error().message.find("Premature end of JPEG file") != std::string::npos);
}

}  // namespace odbatch
