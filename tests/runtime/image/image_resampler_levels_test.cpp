// Every SIMD level against the scalar kernels, which are Pillow's loops: the same bytes for
// thousands of seeded random (source, target) size pairs with sides 1..4096, grey and RGB,
// shrinking, enlarging, mixed and changed by a little, on pixels that hit the clamps; resizing in
// bands of rows gives the whole resize's bytes at any band size. Levels this CPU lacks are reported
// and skipped; asking for one is a ConfigError.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/split_mix64.hpp"
#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/simd_level.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr SimdLevel kVectorLevels[] = {SimdLevel::sse4, SimdLevel::avx2, SimdLevel::avx512,
                                       SimdLevel::avx512_vnni};

struct SizePair {
  std::uint32_t source_width;
  std::uint32_t source_height;
  std::uint32_t target_width;
  std::uint32_t target_height;
};

std::uint32_t side(SplitMix64& rng, std::uint32_t max) {
  return 1 + static_cast<std::uint32_t>(rng.next() % max);
}

// A side changed by up to 20% either way, as smart_resize changes a photo already near its pixel
// budget: windows of 4 to 6 taps whose outermost weights are small (the gathers' 16-bit tails).
std::uint32_t nearby(SplitMix64& rng, std::uint32_t side) {
  const auto change = static_cast<std::int64_t>(rng.next() % 41) - 20;
  return static_cast<std::uint32_t>(std::max<std::int64_t>(1, side + side * change / 100));
}

// One long axis (1..4096) with a short other axis (1..20: whole blocks of 8 and 16 rows and
// leftovers), or both sides small: every ratio and every tail length of the vector loops, at a
// cost the test can afford thousands of times; then long and small sides changed by a little.
std::vector<SizePair> size_pairs(std::uint64_t seed, int long_pairs, int small_pairs,
                                 int nearby_pairs) {
  SplitMix64 rng(seed);
  std::vector<SizePair> pairs;
  for (int i = 0; i < long_pairs; ++i) {
    const bool wide = rng.next() % 2 == 0;
    const std::uint32_t long_in = side(rng, 4096);
    const std::uint32_t long_out = side(rng, 4096);
    const std::uint32_t short_in = side(rng, 20);
    const std::uint32_t short_out = side(rng, 20);
    pairs.push_back(wide ? SizePair{long_in, short_in, long_out, short_out}
                         : SizePair{short_in, long_in, short_out, long_out});
  }
  // Unchanged sizes and single-axis resizes, which take shortcuts.
  pairs.insert(pairs.end(),
               {{37, 5, 37, 5}, {100, 20, 100, 20}, {100, 20, 37, 20}, {37, 20, 37, 5}});
  for (int i = 0; i < small_pairs; ++i)
    pairs.push_back({side(rng, 70), side(rng, 70), side(rng, 70), side(rng, 70)});
  for (int i = 0; i < nearby_pairs; ++i) {
    const std::uint32_t long_in = side(rng, 4096);
    const std::uint32_t short_in = side(rng, 20);
    const bool wide = rng.next() % 2 == 0;
    pairs.push_back(wide
                        ? SizePair{long_in, short_in, nearby(rng, long_in), nearby(rng, short_in)}
                        : SizePair{short_in, long_in, nearby(rng, short_in), nearby(rng, long_in)});
    const std::uint32_t width = side(rng, 300);
    const std::uint32_t height = side(rng, 60);
    pairs.push_back({width, height, nearby(rng, width), nearby(rng, height)});
  }
  return pairs;
}

// Noise with runs of 0 and 255, so sums overshoot both clamps.
Bytes pixels(SplitMix64& rng, std::size_t count) {
  Bytes bytes(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t r = rng.next();
    bytes[i] = (r & 0x30) == 0 ? ((r & 0x40) != 0 ? 255 : 0) : static_cast<std::uint8_t>(r >> 8);
  }
  return bytes;
}

Bytes resized(BicubicResampler& resampler, const Bytes& source, const SizePair& p,
              std::uint32_t channels) {
  Bytes target(std::size_t{p.target_width} * p.target_height * channels);
  resampler.resize(source, p.source_width, p.source_height, target, p.target_width, p.target_height,
                   channels);
  return target;
}

Bytes resized_grey_to_rgb(BicubicResampler& resampler, const Bytes& source, const SizePair& p) {
  Bytes target(std::size_t{p.target_width} * p.target_height * 3);
  resampler.resize_grey_to_rgb(source, p.source_width, p.source_height, target, p.target_width,
                               p.target_height);
  return target;
}

// An RgbBandSink that checks the bands come in order, whole but the last, and keeps them.
class CollectingSink final : public RgbBandSink {
 public:
  explicit CollectingSink(std::uint32_t band_rows) : band_rows_(band_rows) {}
  std::uint32_t band_rows() const override { return band_rows_; }
  void begin(std::uint32_t width, std::uint32_t height) override {
    width_ = width;
    height_ = height;
    rgb.clear();
  }
  void band(const std::uint8_t* band, std::uint32_t first_row, std::uint32_t rows) override {
    CHECK(first_row == rgb.size() / (std::size_t{width_} * 3));
    CHECK((rows == band_rows_ || first_row + rows == height_));
    rgb.insert(rgb.end(), band, band + std::size_t{rows} * width_ * 3);
  }
  Bytes rgb;

 private:
  std::uint32_t band_rows_;
  std::uint32_t width_ = 0;
  std::uint32_t height_ = 0;
};

Bytes resized_in_bands(BicubicResampler& resampler, const Bytes& source, const SizePair& p,
                       std::uint32_t channels, std::uint32_t band_rows) {
  CollectingSink sink(band_rows);
  resampler.resize_in_bands(source, p.source_width, p.source_height, channels, p.target_width,
                            p.target_height, sink);
  return std::move(sink.rgb);
}

TEST_CASE("every SIMD level gives the scalar kernels' bytes for random sizes 1..4096") {
  const std::vector<SizePair> pairs = size_pairs(0x5eed'2026, 300, 1700, 250);
  BicubicResampler scalar(SimdLevel::scalar);
  std::vector<BicubicResampler> levels;
  for (const SimdLevel level : kVectorLevels) {
    if (simd_level_available(level))
      levels.emplace_back(level);
    else
      MESSAGE("not checked on this CPU: " << to_string(level));
  }
  const bool vector_levels_checked = !levels.empty() || cpu_simd_level() == SimdLevel::scalar;
  REQUIRE_MESSAGE(vector_levels_checked, "an x86-64 CPU has SSE4.1");
  SplitMix64 rng(7);
  for (const SizePair& p : pairs) {
    CAPTURE(p.source_width);
    CAPTURE(p.source_height);
    CAPTURE(p.target_width);
    CAPTURE(p.target_height);
    const std::uint64_t source_pixels = std::uint64_t{p.source_width} * p.source_height;
    const Bytes rgb = pixels(rng, source_pixels * 3);
    const Bytes grey = pixels(rng, source_pixels);
    const Bytes expected_rgb = resized(scalar, rgb, p, 3);
    const Bytes expected_grey = resized(scalar, grey, p, 1);
    Bytes expected_grey_as_rgb;
    for (const std::uint8_t value : expected_grey)
      expected_grey_as_rgb.insert(expected_grey_as_rgb.end(), 3, value);
    CHECK(resized_grey_to_rgb(scalar, grey, p) == expected_grey_as_rgb);
    // Bands of 1 row up to more than the image has.
    const auto band_rows = static_cast<std::uint32_t>(1 + rng.next() % 30);
    CAPTURE(band_rows);
    CHECK(resized_in_bands(scalar, rgb, p, 3, band_rows) == expected_rgb);
    CHECK(resized_in_bands(scalar, grey, p, 1, band_rows) == expected_grey_as_rgb);
    for (BicubicResampler& level : levels) {
      CAPTURE(to_string(level.simd_level()));
      CHECK(resized(level, rgb, p, 3) == expected_rgb);
      CHECK(resized(level, grey, p, 1) == expected_grey);
      CHECK(resized_grey_to_rgb(level, grey, p) == expected_grey_as_rgb);
      CHECK(resized_in_bands(level, rgb, p, 3, band_rows) == expected_rgb);
      CHECK(resized_in_bands(level, grey, p, 1, band_rows) == expected_grey_as_rgb);
    }
  }
}

TEST_CASE("a resampler runs at the level it is given, and refuses one the CPU lacks") {
  CHECK(BicubicResampler(SimdLevel::scalar).simd_level() == SimdLevel::scalar);
  CHECK(BicubicResampler(cpu_simd_level()).simd_level() == cpu_simd_level());
  for (const SimdLevel level : kVectorLevels)
    if (!simd_level_available(level)) CHECK_THROWS_AS(BicubicResampler{level}, ConfigError);
}

TEST_CASE("ODBATCH_SIMD lowers the default level and rejects unknown or unavailable ones") {
  const auto with_forced = [](const char* value) {
    setenv("ODBATCH_SIMD", value, 1);
    struct Unset {
      ~Unset() { unsetenv("ODBATCH_SIMD"); }
    } unset;
    return default_simd_level();
  };
  CHECK(with_forced("scalar") == SimdLevel::scalar);
  CHECK(with_forced("") == cpu_simd_level());
  CHECK_THROWS_WITH_AS(with_forced("avx3"), doctest::Contains("ODBATCH_SIMD: 'avx3'"), ConfigError);
  for (const SimdLevel level : kVectorLevels) {
    const std::string name(to_string(level));
    if (simd_level_available(level))
      CHECK(with_forced(name.c_str()) == level);
    else
      CHECK_THROWS_AS(with_forced(name.c_str()), ConfigError);
  }
  CHECK(BicubicResampler().simd_level() == cpu_simd_level());
}

TEST_CASE("level names round-trip") {
  for (const SimdLevel level : kSimdLevels) CHECK(parse_simd_level(to_string(level)) == level);
  CHECK_FALSE(parse_simd_level("AVX2").has_value());
}

}  // namespace
}  // namespace odbatch
