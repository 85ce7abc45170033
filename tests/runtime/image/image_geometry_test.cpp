#include <doctest/doctest.h>

#include <string>

#include "odbatch/image/vision_geometry.hpp"

namespace odbatch {
namespace {

// (height, width) after smart_resize with the default config; fails the test on an error.
std::pair<std::uint32_t, std::uint32_t> resized(std::uint32_t height, std::uint32_t width,
                                                const VisionGeometryConfig& config = {}) {
  const auto target = smart_resize(height, width, config);
  REQUIRE_MESSAGE(target.ok(), target.error().message);
  return {target.value().height, target.value().width};
}

std::string config_error_field(const VisionGeometryConfig& config) {
  try {
    validate(config);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

}  // namespace

TEST_CASE("smart_resize rounds each side to the nearest multiple of 28 when within bounds") {
  // 427/28 = 15.25 -> 15 * 28 = 420; 640/28 = 22.86 -> 23 * 28 = 644; 270,480 pixels.
  const auto target = smart_resize(427, 640);
  REQUIRE(target.ok());
  CHECK(target.value().height == 420);
  CHECK(target.value().width == 644);
  CHECK(target.value().grid == ImageGrid{30, 46, 345});  // 30 * 46 / 4 = 345 tokens
  CHECK(target.value().grid.patches() == 1380);
  CHECK(resized(375, 500) == std::pair{364u, 504u});
  CHECK(resized(240, 320) == std::pair{252u, 308u});
  CHECK(resized(150, 150) == std::pair{140u, 140u});  // 5.36 -> 5
}

TEST_CASE("smart_resize ties round to even, as Python's round does") {
  CHECK(resized(98, 700) == std::pair{112u, 700u});  // 98/28 = 3.5 -> 4
  // 70/28 = 2.5 -> 2: 56x56 meets min_pixels exactly. Rounding half up would give 84x84.
  CHECK(resized(70, 70) == std::pair{56u, 56u});
  CHECK(resized(42, 42) == std::pair{56u, 56u});  // 1.5 -> 2
}

TEST_CASE("smart_resize scales images over max_pixels down to fit, keeping the aspect ratio") {
  // beta = sqrt(2448 * 4352 / 1003520) = 3.2583; 2448 / beta / 28 = 26.83 -> 26 * 28 = 728;
  // 4352 / beta / 28 = 47.70 -> 47 * 28 = 1316.
  const auto target = smart_resize(2448, 4352);
  REQUIRE(target.ok());
  CHECK(target.value().height == 728);
  CHECK(target.value().width == 1316);
  CHECK(target.value().grid == ImageGrid{52, 94, 1222});
  CHECK(std::uint64_t{728} * 1316 <= VisionGeometryConfig{}.max_pixels);
  CHECK(resized(3000, 4000) == std::pair{840u, 1148u});
  CHECK(resized(1080, 1920) == std::pair{728u, 1316u});
  CHECK(resized(7000, 7000) == std::pair{980u, 980u});
  CHECK(resized(200, 40000) == std::pair{56u, 14140u});  // aspect ratio exactly 200 is allowed
}

TEST_CASE("smart_resize enlarges tiny images up to min_pixels") {
  // Both sides round to at least 28, 784 < 3136 pixels: beta = sqrt(3136 / 100) = 5.6,
  // ceil(10 * 5.6 / 28) * 28 = 56.
  CHECK(resized(10, 10) == std::pair{56u, 56u});
  CHECK(resized(1, 1) == std::pair{56u, 56u});
  CHECK(resized(28, 28) == std::pair{56u, 56u});
  CHECK(resized(55, 57) == std::pair{56u, 56u});
  CHECK(resized(1000, 5) == std::pair{1008u, 28u});  // a side rounding to 0 becomes 28
}

TEST_CASE("smart_resize keeps sides at least one factor when max_pixels forces them below") {
  VisionGeometryConfig config;
  config.max_pixels = 56 * 56;
  // 28x5600 rounds to 156,800 pixels; beta = sqrt(50): 28 / beta / 28 < 1 -> 0 -> 28, and
  // 5600 / beta / 28 = 28.28 -> 28 * 28 = 784.
  CHECK(resized(28, 5600, config) == std::pair{28u, 784u});
}

TEST_CASE("smart_resize follows the configured patch and merge sizes") {
  VisionGeometryConfig config;
  config.patch_size = 16;
  config.merge_size = 2;
  config.min_pixels = 256 * 256;
  config.max_pixels = 512 * 512;
  const auto target = smart_resize(427, 640, config);
  REQUIRE(target.ok());
  CHECK(target.value().height == 416);
  CHECK(target.value().width == 608);
  CHECK(target.value().grid == ImageGrid{26, 38, 247});
}

TEST_CASE("smart_resize refuses zero sides and aspect ratios over 200") {
  for (const auto& [height, width] :
       {std::pair{1u, 1000u}, std::pair{14u, 5000u}, std::pair{1000u, 4u}, std::pair{0u, 10u},
        std::pair{10u, 0u}}) {
    const auto target = smart_resize(height, width);
    REQUIRE_FALSE(target.ok());
    CHECK(target.error().kind == ImageErrorKind::bad_geometry);
    CHECK(target.error().message.find(std::to_string(width) + "x" + std::to_string(height)) !=
          std::string::npos);
  }
  CHECK(smart_resize(1, 1000).error().message.find("aspect ratio over 200") != std::string::npos);
  CHECK(smart_resize(100'000'000, 100'000'000).error().kind == ImageErrorKind::bad_geometry);
}

TEST_CASE("geometry config validation names the offending field") {
  CHECK(config_error_field({}) == "");
  CHECK(config_error_field({.patch_size = 0}) == "patch_size");
  CHECK(config_error_field({.patch_size = 2000}) == "patch_size");
  CHECK(config_error_field({.merge_size = 0}) == "merge_size");
  CHECK(config_error_field({.patch_size = 512, .merge_size = 4}) == "merge_size");
  CHECK(config_error_field({.min_pixels = 100, .max_pixels = 700}) == "max_pixels");
  CHECK(config_error_field({.min_pixels = 1'000'000, .max_pixels = 900'000}) == "min_pixels");
  CHECK(config_error_field({.max_pixels = std::uint64_t{1} << 31}) == "max_pixels");
  CHECK_THROWS_AS(smart_resize(100, 100, {.merge_size = 0}), ConfigError);
}

}  // namespace odbatch
