// Sizes and pixels for the bicubic resampler: every SIMD level this CPU has must give the scalar
// kernels' bytes, for RGB, grey, and grey written as RGB.
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/simd_level.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "image_resize";
constexpr std::size_t kSizeBytes = 8;
// Sides up to 1024 with at most 2^14 pixels a side of the resize: tens of runs a second under
// the sanitizers (four levels, three resizes each), with every ratio and vector tail reachable.
constexpr std::uint32_t kMaxSide = 1024;
constexpr std::uint64_t kMaxPixels = std::uint64_t{1} << 14;

std::uint32_t side(Input input, std::size_t at) {
  return 1 + (static_cast<std::uint32_t>(input[at]) | std::uint32_t{input[at + 1]} << 8) % kMaxSide;
}

void fit(std::uint32_t& width, std::uint32_t& height) {
  while (std::uint64_t{width} * height > kMaxPixels) (width > height ? width : height) /= 2;
}

std::vector<std::uint8_t> pixels(Input input, std::size_t count) {
  const Input source = input.subspan(kSizeBytes);
  std::vector<std::uint8_t> bytes(count, 0);
  for (std::size_t i = 0; !source.empty() && i < count; ++i) bytes[i] = source[i % source.size()];
  return bytes;
}

}  // namespace

Outcome image_resize(Input input) {
  if (input.size() < kSizeBytes) return Outcome::rejected;
  std::uint32_t source_width = side(input, 0);
  std::uint32_t source_height = side(input, 2);
  std::uint32_t target_width = side(input, 4);
  std::uint32_t target_height = side(input, 6);
  fit(source_width, source_height);
  fit(target_width, target_height);
  const std::size_t source_pixels = std::size_t{source_width} * source_height;
  const std::size_t target_pixels = std::size_t{target_width} * target_height;
  const std::vector<std::uint8_t> rgb = pixels(input, source_pixels * 3);
  const std::vector<std::uint8_t> grey = pixels(input, source_pixels);

  const auto resize = [&](BicubicResampler& resampler, const std::vector<std::uint8_t>& source,
                          std::uint32_t channels) {
    std::vector<std::uint8_t> target(target_pixels * channels);
    resampler.resize(source, source_width, source_height, target, target_width, target_height,
                     channels);
    return target;
  };
  const auto grey_as_rgb = [&](BicubicResampler& resampler) {
    std::vector<std::uint8_t> target(target_pixels * 3);
    resampler.resize_grey_to_rgb(grey, source_width, source_height, target, target_width,
                                 target_height);
    return target;
  };
  BicubicResampler scalar(SimdLevel::scalar);
  const auto expected_rgb = resize(scalar, rgb, 3);
  const auto expected_grey = resize(scalar, grey, 1);
  std::vector<std::uint8_t> expected_grey_as_rgb;
  for (const std::uint8_t value : expected_grey)
    expected_grey_as_rgb.insert(expected_grey_as_rgb.end(), 3, value);
  expect(grey_as_rgb(scalar) == expected_grey_as_rgb, kTarget,
         "grey written as RGB equals the grey resize in R, G and B");
  for (const SimdLevel level : kSimdLevels) {
    if (level == SimdLevel::scalar) continue;
    if (!simd_level_available(level)) continue;
    BicubicResampler vector(level);
    expect(resize(vector, rgb, 3) == expected_rgb, kTarget, "RGB equals the scalar kernels'");
    expect(resize(vector, grey, 1) == expected_grey, kTarget, "grey equals the scalar kernels'");
    expect(grey_as_rgb(vector) == expected_grey_as_rgb, kTarget,
           "grey as RGB equals the scalar kernels'");
  }
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
