// PixelValuesWriter's layout, arithmetic and errors, and the pixel_values settings' validation,
// without the reference implementation (image_pixel_values_parity_test.cpp has that).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "image_test_jpegs.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/image/image_processor.hpp"
#include "odbatch/image/pixel_values_writer.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::uint16_t bits_of_bfloat16(std::uint32_t float_bits) {
  return to_bfloat16(std::bit_cast<float>(float_bits));
}

std::string config_error_field(const PixelValuesConfig& config) {
  try {
    validate(config);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

TEST_CASE("bfloat16 rounds float32 to nearest, ties to even, as torch does") {
  CHECK(bits_of_bfloat16(0x3F800000) == 0x3F80);  // 1.0
  CHECK(bits_of_bfloat16(0x3F807FFF) == 0x3F80);  // below half: down
  CHECK(bits_of_bfloat16(0x3F808000) == 0x3F80);  // tie, even below: down
  CHECK(bits_of_bfloat16(0x3F818000) == 0x3F82);  // tie, odd below: up
  CHECK(bits_of_bfloat16(0x3F808001) == 0x3F81);  // above half: up
  CHECK(bits_of_bfloat16(0xBF808001) == 0xBF81);  // negative alike
  CHECK(bits_of_bfloat16(0x7F7FFFFF) == 0x7F80);  // the largest float rounds to infinity
  CHECK(bits_of_bfloat16(0x7F800000) == 0x7F80);  // infinity stays
  const std::uint16_t nan = to_bfloat16(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7F80) == 0x7F80);
  CHECK((nan & 0x007F) != 0);
}

TEST_CASE("pixel_values settings are checked, naming the setting") {
  CHECK(config_error_field({}) == "");
  PixelValuesConfig config;
  config.rescale_factor = 0.0;
  CHECK(config_error_field(config) == "rescale_factor");
  config = {};
  config.rescale_factor = std::numeric_limits<double>::infinity();
  CHECK(config_error_field(config) == "rescale_factor");
  config = {};
  config.image_mean[1] = std::nan("");
  CHECK(config_error_field(config) == "image_mean");
  config = {};
  config.image_mean[2] = 1e300;  // infinite once rounded to float32
  CHECK(config_error_field(config) == "image_mean");
  config = {};
  config.image_std[0] = 0.0;
  CHECK(config_error_field(config) == "image_std");
  config = {};
  config.image_std[2] = -0.5;
  CHECK(config_error_field(config) == "image_std");
  config = {};
  config.image_std[1] = 1e-300;  // zero once rounded to float32
  CHECK(config_error_field(config) == "image_std");
  config = {};
  config.temporal_patch_size = 0;
  CHECK(config_error_field(config) == "temporal_patch_size");
  config.temporal_patch_size = kMaxTemporalPatchSize + 1;
  CHECK(config_error_field(config) == "temporal_patch_size");
  config = {};
  CHECK_THROWS_AS(PixelValuesWriter(config, {}), ConfigError);  // uint8: nothing to write
}

// The processor's patchify written as index arithmetic on the 9-dimensional view, element by
// element: the value at (patch row, column) comes from pixel (y, x), channel c, frame t. Patch
// sides 3 and 9 take the writer's vector stores and the values after them; bfloat16 holds small
// integers exactly.
TEST_CASE("pixel_values are laid out as the processor's reshape and transpose") {
  for (const std::uint32_t p : {3u, 9u})
    for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
      CAPTURE(p);
      CAPTURE(to_string(dtype));
      VisionGeometryConfig geometry;
      geometry.patch_size = p;
      geometry.merge_size = 2;
      geometry.min_pixels = 36;
      geometry.max_pixels = 1 << 20;
      PixelValuesConfig config;
      config.dtype = dtype;
      config.rescale_factor = 1.0;  // identity: every value is its uint8 input
      config.image_mean = {0.0, 0.0, 0.0};
      config.image_std = {1.0, 1.0, 1.0};
      config.temporal_patch_size = 3;
      const PixelValuesWriter writer(config, geometry);
      const std::uint32_t m = 2, t_size = 3, width = 4 * p * m, height = 3 * p * m;
      CHECK(writer.values_per_patch() == 3 * t_size * p * p);

      Bytes rgb(std::size_t{width} * height * 3);
      for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 7 % 251);
      Bytes out(writer.bytes_for(width, height));
      writer.write(rgb, width, height, out);
      const std::size_t count = out.size() / element_bytes(dtype);
      const auto value = [&](std::size_t i) {
        if (dtype == PixelDtype::float32) {
          float v = 0;
          std::memcpy(&v, out.data() + i * 4, 4);
          return v;
        }
        std::uint16_t bits = 0;
        std::memcpy(&bits, out.data() + i * 2, 2);
        return std::bit_cast<float>(std::uint32_t{bits} << 16);
      };

      const std::uint32_t grid_w = width / p, grid_h = height / p;
      REQUIRE(count == std::size_t{grid_h} * grid_w * writer.values_per_patch());
      std::size_t checked = 0;
      for (std::uint32_t bh = 0; bh < grid_h / m; ++bh)
        for (std::uint32_t bw = 0; bw < grid_w / m; ++bw)
          for (std::uint32_t mh = 0; mh < m; ++mh)
            for (std::uint32_t mw = 0; mw < m; ++mw)
              for (std::uint32_t c = 0; c < 3; ++c)
                for (std::uint32_t t = 0; t < t_size; ++t)
                  for (std::uint32_t ph = 0; ph < p; ++ph)
                    for (std::uint32_t pw = 0; pw < p; ++pw) {
                      const std::size_t row =
                          ((std::size_t{bh} * (grid_w / m) + bw) * m + mh) * m + mw;
                      const std::size_t column = ((std::size_t{c} * t_size + t) * p + ph) * p + pw;
                      const std::size_t y = (std::size_t{bh} * m + mh) * p + ph;
                      const std::size_t x = (std::size_t{bw} * m + mw) * p + pw;
                      const float expected = rgb[(y * width + x) * 3 + c];
                      REQUIRE(value(row * writer.values_per_patch() + column) == expected);
                      ++checked;
                    }
      CHECK(checked == count);
    }
}

TEST_CASE("pixel_values follow the configured rescale factor, mean and deviation") {
  PixelValuesConfig config;
  config.dtype = PixelDtype::float32;
  config.rescale_factor = 1.0 / 127.5;
  config.image_mean = {0.5, 0.25, 1.0};
  config.image_std = {0.5, 2.0, 0.125};
  config.temporal_patch_size = 1;
  const VisionGeometryConfig geometry;
  const PixelValuesWriter writer(config, geometry);
  const std::uint32_t side = geometry.factor();
  Bytes rgb(std::size_t{side} * side * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i % 256);
  Bytes out(writer.bytes_for(side, side));
  writer.write(rgb, side, side, out);
  // Pixel (0, 0) opens the first patch's channel 0, 1 and 2 blocks (14 x 14 values each).
  std::vector<float> values(out.size() / sizeof(float));
  std::memcpy(values.data(), out.data(), out.size());
  const std::size_t channel_block = 14 * 14;
  for (std::uint32_t c = 0; c < 3; ++c) {
    const float rescaled = static_cast<float>(static_cast<double>(rgb[c]) * config.rescale_factor);
    const float expected = (rescaled - static_cast<float>(config.image_mean[c])) /
                           static_cast<float>(config.image_std[c]);
    CHECK(values[c * channel_block] == expected);
  }
}

TEST_CASE("the writer refuses sizes that are not whole merge blocks or buffers that do not fit") {
  PixelValuesConfig config;
  config.dtype = PixelDtype::bfloat16;
  const PixelValuesWriter writer(config, {});
  CHECK(writer.values_per_patch() == 1176);
  CHECK(writer.bytes_for(56, 28) == 8 * 1176 * 2);
  Bytes rgb(56 * 28 * 3);
  Bytes out(writer.bytes_for(56, 28));
  CHECK_NOTHROW(writer.write(rgb, 56, 28, out));
  CHECK_THROWS_AS(writer.write(rgb, 28, 56 - 14, out), std::invalid_argument);
  Bytes short_out(out.size() - 2);
  CHECK_THROWS_AS(writer.write(rgb, 56, 28, short_out), std::invalid_argument);
  Bytes short_rgb(rgb.size() - 3);
  CHECK_THROWS_AS(writer.write(short_rgb, 56, 28, out), std::invalid_argument);
}

TEST_CASE("the image processor keeps uint8 pixels unless pixel_values are asked for") {
  const Bytes jpeg = test::pattern_jpeg(100, 80);
  VisionGeometryConfig geometry;
  ImageProcessor uint8({}, geometry, {});
  auto pixels = uint8.process(jpeg);
  REQUIRE(pixels);
  CHECK(pixels.value().dtype == PixelDtype::uint8);
  CHECK(pixels.value().patch_values.empty());
  CHECK(pixels.value().values_per_patch == 0);
  JpegDecoder decoder;
  CHECK(pixels.value().rgb == decoder.decode(jpeg, geometry).value().rgb);

  PixelValuesConfig config;
  config.dtype = PixelDtype::bfloat16;
  ImageProcessor bfloat16({}, geometry, config);
  auto values = bfloat16.process(jpeg);
  REQUIRE(values);
  CHECK(values.value().rgb.empty());
  CHECK(values.value().patch_values.size() ==
        std::size_t{values.value().grid.patches()} * 1176 * 2);
  CHECK_FALSE(bfloat16.process(Bytes{0xFF, 0xD8, 0x00}));  // corrupt: an ImageError, not a throw
}

TEST_CASE("the processor's pixel_values, written from the resize's bands, equal the writer's") {
  VisionGeometryConfig geometry;
  struct Jpeg {
    const char* what;
    Bytes bytes;
  };
  const Jpeg jpegs[] = {
      {"RGB, resized", test::pattern_jpeg(150, 97)},
      {"RGB, already the target's size", test::pattern_jpeg(56, 84)},
      {"RGB, DCT-scaled", test::pattern_jpeg(2000, 1500)},
      {"grey, resized",
       test::encode_jpeg(test::pattern_rgb(130, 61), 130, 61, ChromaSubsampling::grey)},
      {"grey, already the target's size",
       test::encode_jpeg(test::pattern_rgb(56, 28), 56, 28, ChromaSubsampling::grey)},
      {"CMYK, resized", test::encode_cmyk_jpeg(90, 70)},
      {"CMYK, already the target's size", test::encode_cmyk_jpeg(84, 56)},
  };
  for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
    PixelValuesConfig config;
    config.dtype = dtype;
    const PixelValuesWriter writer(config, geometry);
    ImageProcessor processor({}, geometry, config);
    JpegDecoder decoder;
    for (const Jpeg& jpeg : jpegs) {
      CAPTURE(jpeg.what);
      CAPTURE(to_string(dtype));
      const auto decoded = decoder.decode(jpeg.bytes, geometry);
      REQUIRE(decoded);
      const DecodedImage& image = decoded.value();
      Bytes expected(writer.bytes_for(image.width, image.height));
      writer.write(image.rgb, image.width, image.height, expected);
      const auto values = processor.process(jpeg.bytes);
      REQUIRE(values);
      CHECK(values.value().rgb.empty());
      CHECK(values.value().width == image.width);
      CHECK(values.value().height == image.height);
      CHECK(values.value().dct_scale == image.dct_scale);
      const auto& made = values.value().patch_values;
      CHECK(Bytes(made.begin(), made.end()) == expected);
    }
  }
}

TEST_CASE("a block row at a time, the writer writes what it writes for the whole image") {
  const VisionGeometryConfig geometry;
  PixelValuesConfig config;
  config.dtype = PixelDtype::float32;
  const PixelValuesWriter writer(config, geometry);
  CHECK(writer.block_rows() == 28);
  const std::uint32_t width = 84;
  const std::uint32_t height = 56;
  const Bytes rgb = test::pattern_rgb(width, height);
  Bytes whole(writer.bytes_for(width, height));
  writer.write(rgb, width, height, whole);
  Bytes by_rows(whole.size());
  // Out of order, to show each block row lands at its own place.
  for (const std::uint32_t block_row : {1u, 0u})
    writer.write_block_row(rgb.data() + std::size_t{block_row} * 28 * width * 3, width, height,
                           block_row, by_rows);
  CHECK(by_rows == whole);
  CHECK_THROWS_AS(writer.write_block_row(rgb.data(), width, height, 2, by_rows),
                  std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
