#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "image_test_jpegs.hpp"
#include "odbatch/image/jpeg_decoder.hpp"

namespace odbatch {
namespace {

using test::Bytes;

// Limits that let JPEGs decode at a reduced DCT scale.
JpegDecoderLimits dct_scaling() {
  JpegDecoderLimits limits;
  limits.jpeg_dct_scaling = true;
  return limits;
}

DecodedImage decoded(JpegDecoder& decoder, const Bytes& jpeg,
                     const VisionGeometryConfig& geometry = {}) {
  auto image = decoder.decode(jpeg, geometry);
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return std::move(image).value();
}

ImageError decode_error(JpegDecoder& decoder, const Bytes& jpeg) {
  const auto image = decoder.decode(jpeg, VisionGeometryConfig{});
  REQUIRE_FALSE(image.ok());
  return image.error();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// libjpeg-turbo's scaled size of `side` at num/8.
std::uint32_t eighths(std::uint32_t side, std::uint32_t num) {
  return (side * num + 7) / 8;
}

}  // namespace

TEST_CASE("the header gives size, components and subsampling without decoding") {
  JpegDecoder decoder;
  struct Case {
    std::uint32_t width, height;
    ChromaSubsampling subsampling;
    std::uint32_t components;
  };
  for (const Case& c :
       {Case{640, 427, ChromaSubsampling::s420, 3}, Case{333, 501, ChromaSubsampling::s444, 3},
        Case{150, 150, ChromaSubsampling::s422, 3}, Case{97, 64, ChromaSubsampling::s440, 3},
        Case{120, 90, ChromaSubsampling::s411, 3}, Case{320, 240, ChromaSubsampling::grey, 1}}) {
    CAPTURE(to_string(c.subsampling));
    const auto header = decoder.read_header(test::pattern_jpeg(c.width, c.height, c.subsampling));
    REQUIRE_MESSAGE(header.ok(), header.error().message);
    CHECK(header.value().width == c.width);
    CHECK(header.value().height == c.height);
    CHECK(header.value().subsampling == c.subsampling);
    CHECK(header.value().components == c.components);
    CHECK(header.value().colorspace ==
          (c.components == 1 ? JpegColorspace::grey : JpegColorspace::ycbcr));
  }
}

TEST_CASE("decoding yields the grid the header predicts and exactly height * width * 3 bytes") {
  JpegDecoder decoder;
  for (const auto& [width, height] :
       {std::pair{640u, 427u}, std::pair{1000u, 5u}, std::pair{20u, 15u}, std::pair{1920u, 1080u},
        std::pair{801u, 1203u}}) {
    CAPTURE(width);
    CAPTURE(height);
    const Bytes jpeg = test::pattern_jpeg(width, height);
    const auto header = decoder.read_header(jpeg);
    REQUIRE(header.ok());
    const auto target = smart_resize(header.value().height, header.value().width);
    REQUIRE(target.ok());
    const DecodedImage image = decoded(decoder, jpeg);
    CHECK(image.grid == target.value().grid);
    CHECK(image.width == target.value().width);
    CHECK(image.height == target.value().height);
    CHECK(image.width == image.grid.grid_w * 14);
    CHECK(image.height == image.grid.grid_h * 14);
    CHECK(image.rgb.size() == std::size_t{image.height} * image.width * 3);
    CHECK(image.source_width == width);
    CHECK(image.source_height == height);
  }
}

TEST_CASE("by default a photo decodes in full, as the processor's Pillow does") {
  JpegDecoder decoder;
  const DecodedImage image = decoded(decoder, test::pattern_jpeg(4000, 3000));
  CHECK(image.width == 1148);
  CHECK(image.height == 840);
  CHECK(image.dct_scale == DctScale{1, 1});
  CHECK(image.decoded_width == 4000);
  CHECK(image.decoded_height == 3000);
}

TEST_CASE("with DCT scaling, a 4000x3000 photo bound for about a megapixel decodes at 3/8") {
  JpegDecoder decoder(dct_scaling());
  const DecodedImage image = decoded(decoder, test::pattern_jpeg(4000, 3000));
  CHECK(image.width == 1148);  // smart_resize(3000, 4000) = 840x1148
  CHECK(image.height == 840);
  // 1/4 would give 1000x750, short of 1148x840; 3/8 gives 1500x1125, which covers it.
  CHECK(image.dct_scale == DctScale{3, 8});
  CHECK(image.decoded_width == 1500);
  CHECK(image.decoded_height == 1125);
}

TEST_CASE("the DCT scale is the smallest whose decode still covers the target") {
  JpegDecoder decoder(dct_scaling());
  VisionGeometryConfig small_target;
  small_target.max_pixels = 128 * 128;
  for (const auto& [width, height] :
       {std::pair{2048u, 1536u}, std::pair{1200u, 900u}, std::pair{640u, 427u},
        std::pair{300u, 200u}, std::pair{40u, 40u}}) {
    for (const auto& geometry : {VisionGeometryConfig{}, small_target}) {
      CAPTURE(width);
      CAPTURE(height);
      CAPTURE(geometry.max_pixels);
      const DecodedImage image = decoded(decoder, test::pattern_jpeg(width, height), geometry);
      REQUIRE(8 % image.dct_scale.den == 0);  // libjpeg-turbo's reducing scales are k/8
      const std::uint32_t num = image.dct_scale.num * (8 / image.dct_scale.den);
      CHECK(image.decoded_width == eighths(width, num));
      CHECK(image.decoded_height == eighths(height, num));
      if (num < 8) {
        CHECK(image.decoded_width >= image.width);
        CHECK(image.decoded_height >= image.height);
      }
      if (num > 1) {
        const bool smaller_covers =
            eighths(width, num - 1) >= image.width && eighths(height, num - 1) >= image.height;
        CHECK_FALSE(smaller_covers);
      }
    }
  }
  // The 128x128-pixel target of a 2048x1536 image is 140x112 (a 1/8 decode is 256x192).
  const DecodedImage tiny = decoded(decoder, test::pattern_jpeg(2048, 1536), small_target);
  CHECK(tiny.dct_scale == DctScale{1, 8});
}

TEST_CASE("a constant colour stays constant through decode and resize") {
  JpegDecoder decoder;
  for (const auto& [width, height] : {std::pair{1600u, 1200u}, std::pair{20u, 30u}}) {
    for (const auto subsampling : {ChromaSubsampling::s420, ChromaSubsampling::s444}) {
      const Bytes jpeg = test::encode_jpeg(test::constant_rgb(width, height, 200, 90, 30), width,
                                           height, subsampling, 100);
      const DecodedImage image = decoded(decoder, jpeg);
      for (std::size_t c = 0; c < 3; ++c) {
        std::uint8_t lo = 255;
        std::uint8_t hi = 0;
        for (std::size_t i = c; i < image.rgb.size(); i += 3) {
          lo = std::min(lo, image.rgb[i]);
          hi = std::max(hi, image.rgb[i]);
        }
        CHECK(hi - lo <= 1);
        const int expected = c == 0 ? 200 : c == 1 ? 90 : 30;
        CHECK(std::abs(lo - expected) <= 2);  // JPEG's colour conversion rounds
      }
    }
  }
}

TEST_CASE("a horizontal ramp stays monotone left to right") {
  const std::uint32_t width = 4000;  // resized to 1820x532
  const std::uint32_t height = 1200;
  const Bytes jpeg = test::encode_jpeg(test::horizontal_ramp_rgb(width, height), width, height,
                                       ChromaSubsampling::grey, 100);
  for (const bool scaled : {false, true}) {
    CAPTURE(scaled);
    JpegDecoder decoder(scaled ? dct_scaling() : JpegDecoderLimits{});
    const DecodedImage image = decoded(decoder, jpeg);
    CHECK((image.dct_scale.num * 2 <= image.dct_scale.den) == scaled);  // at 1/2 or less
    for (std::uint32_t y = 0; y < image.height; ++y) {
      const std::uint8_t* row = &image.rgb[std::size_t{y} * image.width * 3];
      for (std::uint32_t x = 1; x < image.width; ++x) REQUIRE(row[x * 3] >= row[(x - 1) * 3]);
      CHECK(row[0] <= 3);
      CHECK(row[(image.width - 1) * 3] >= 252);
    }
  }
}

TEST_CASE("grey JPEGs decode to RGB with equal channels") {
  JpegDecoder decoder;
  const DecodedImage image =
      decoded(decoder, test::pattern_jpeg(320, 240, ChromaSubsampling::grey));
  REQUIRE(image.rgb.size() == std::size_t{image.width} * image.height * 3);
  for (std::size_t i = 0; i < image.rgb.size(); i += 3) {
    REQUIRE(image.rgb[i] == image.rgb[i + 1]);
    REQUIRE(image.rgb[i] == image.rgb[i + 2]);
  }
}

TEST_CASE("decoding into a recycled image reuses its pixels and matches a fresh decode") {
  JpegDecoder decoder;
  const Bytes large = test::pattern_jpeg(1024, 768);
  const Bytes small = test::pattern_jpeg(300, 200);
  DecodedImage recycled;
  REQUIRE_FALSE(decoder.decode(large, {}, recycled));
  const std::uint8_t* pixels = recycled.rgb.data();
  REQUIRE_FALSE(decoder.decode(small, {}, recycled));
  CHECK(recycled.rgb.data() == pixels);  // smaller image: no new allocation
  CHECK(recycled.rgb == decoded(decoder, small).rgb);
  REQUIRE_FALSE(decoder.decode(large, {}, recycled));
  CHECK(recycled.rgb.data() == pixels);
  CHECK(recycled.rgb == decoded(decoder, large).rgb);
}

TEST_CASE("a truncated JPEG is corrupt, with libjpeg-turbo's reason") {
  JpegDecoder decoder;
  Bytes jpeg = test::pattern_jpeg(640, 480);
  jpeg.resize(jpeg.size() / 2);
  CHECK(decoder.read_header(jpeg).ok());  // the header is intact
  const ImageError error = decode_error(decoder, jpeg);
  CHECK(error.kind == ImageErrorKind::corrupt);
  CHECK(contains(error.message, "Premature end of JPEG file"));
  Bytes header_only = test::pattern_jpeg(640, 480);
  header_only.resize(test::frame_header_offset(header_only) + 6);
  CHECK(decode_error(decoder, header_only).kind == ImageErrorKind::corrupt);
}

TEST_CASE("damaged bytes are corrupt, and the decoder recovers for the next good image") {
  JpegDecoder decoder;
  const Bytes good = test::pattern_jpeg(640, 480);
  const DecodedImage reference = decoded(decoder, good);

  // Huffman table counts that add up to more codes than fit: a bogus table.
  Bytes bad_table = good;
  const std::uint8_t dht_marker[] = {0xFF, 0xC4};
  const auto table =
      std::search(bad_table.begin(), bad_table.end(), std::begin(dht_marker), std::end(dht_marker));
  REQUIRE(table != bad_table.end());
  std::fill(table + 5, table + 21, 0xFF);
  const ImageError table_error = decode_error(decoder, bad_table);
  CHECK(table_error.kind == ImageErrorKind::corrupt);
  CHECK(contains(table_error.message, "Huffman"));
  CHECK(decoded(decoder, good).rgb == reference.rgb);

  // A run of stray markers in the middle of the entropy-coded data.
  Bytes bad_scan = good;
  const std::size_t middle = test::scan_data_offset(good) + 200;
  for (std::size_t i = 0; i < 64; i += 2) {
    bad_scan[middle + i] = 0xFF;
    bad_scan[middle + i + 1] = 0xD3;
  }
  CHECK(decode_error(decoder, bad_scan).kind == ImageErrorKind::corrupt);
  CHECK(decoded(decoder, good).rgb == reference.rgb);
  CHECK(decoder.read_header(good).ok());
}

TEST_CASE("a header declaring too many pixels is a pixel bomb, refused before decoding") {
  JpegDecoder decoder;
  const Bytes jpeg = test::pattern_jpeg(64, 48);
  const Bytes bomb = test::with_declared_size(jpeg, 20000, 20000);
  const auto header = decoder.read_header(bomb);
  REQUIRE_FALSE(header.ok());
  CHECK(header.error().kind == ImageErrorKind::pixel_bomb);
  CHECK(contains(header.error().message, "20000x20000 = 400000000 pixels"));
  CHECK(decode_error(decoder, bomb).kind == ImageErrorKind::pixel_bomb);

  const ImageError side = decode_error(decoder, test::with_declared_size(jpeg, 40000, 10));
  CHECK(side.kind == ImageErrorKind::pixel_bomb);
  CHECK(contains(side.message, "a side over 32768"));

  JpegDecoder strict({.max_source_pixels = 3000, .max_source_side = 32768});
  CHECK(strict.decode(jpeg, {}).error().kind == ImageErrorKind::pixel_bomb);  // 3072 pixels
  CHECK(strict.read_header(test::pattern_jpeg(60, 50)).ok());
}

TEST_CASE("what is not a decodable JPEG is unsupported or corrupt, never a crash") {
  JpegDecoder decoder;
  const Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13};
  const ImageError not_jpeg = decode_error(decoder, png);
  CHECK(not_jpeg.kind == ImageErrorKind::unsupported);
  CHECK(contains(not_jpeg.message, "0x89 0x50"));
  CHECK(decode_error(decoder, Bytes{}).kind == ImageErrorKind::corrupt);
  CHECK(decode_error(decoder, Bytes{0xFF}).kind == ImageErrorKind::unsupported);
  CHECK(decode_error(decoder, Bytes{0xFF, 0xD8}).kind == ImageErrorKind::corrupt);

  const ImageError thin = decode_error(decoder, test::pattern_jpeg(1000, 1));
  CHECK(thin.kind == ImageErrorKind::bad_geometry);
  CHECK(contains(thin.message, "1000x1"));
  CHECK(decoded(decoder, test::pattern_jpeg(64, 64)).grid == ImageGrid{4, 4, 4});
}

TEST_CASE("decoder limits are validated by field name") {
  CHECK_THROWS_WITH_AS(JpegDecoder({.max_source_pixels = 0}), "max_source_pixels: must be positive",
                       ConfigError);
  CHECK_THROWS_WITH_AS(JpegDecoder({.max_source_pixels = 10, .max_source_side = 0}),
                       "max_source_side: must be positive", ConfigError);
}

TEST_CASE("a moved decoder keeps decoding") {
  JpegDecoder first;
  JpegDecoder second(std::move(first));
  CHECK(decoded(second, test::pattern_jpeg(100, 80)).rgb.size() == 112 * 84 * 3);
  first = std::move(second);
  CHECK(decoded(first, test::pattern_jpeg(100, 80)).rgb.size() == 112 * 84 * 3);
}

}  // namespace odbatch
