#include "odbatch/image/vision_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace odbatch {
namespace {

constexpr std::uint32_t kMaxPatchSize = 1024;
constexpr std::uint32_t kMaxMergeSize = 16;
constexpr std::uint32_t kMaxFactor = 1024;
constexpr std::uint64_t kMaxPixelsCap = std::uint64_t{1} << 30;
// Below 2^53 every pixel count converts to double exactly, as Python's integers would.
constexpr std::uint64_t kMaxExactPixels = std::uint64_t{1} << 53;

// Python's round(n / d) for integers: to nearest, ties to even. Exact, unlike any float path.
std::uint64_t round_half_even(std::uint64_t n, std::uint64_t d) {
  const std::uint64_t quotient = n / d;
  const std::uint64_t twice_remainder = 2 * (n % d);
  if (twice_remainder > d || (twice_remainder == d && quotient % 2 == 1)) return quotient + 1;
  return quotient;
}

std::uint32_t floor_to_factor(double value, std::uint32_t factor) {
  return static_cast<std::uint32_t>(std::floor(value / factor)) * factor;
}

std::uint32_t ceil_to_factor(double value, std::uint32_t factor) {
  return static_cast<std::uint32_t>(std::ceil(value / factor)) * factor;
}

std::string sides(std::uint32_t height, std::uint32_t width) {
  return std::to_string(width) + "x" + std::to_string(height);
}

}  // namespace

void validate(const VisionGeometryConfig& config) {
  if (config.patch_size == 0 || config.patch_size > kMaxPatchSize)
    throw ConfigError("patch_size", "must be 1.." + std::to_string(kMaxPatchSize) + ", got " +
                                        std::to_string(config.patch_size));
  if (config.merge_size == 0 || config.merge_size > kMaxMergeSize)
    throw ConfigError("merge_size", "must be 1.." + std::to_string(kMaxMergeSize) + ", got " +
                                        std::to_string(config.merge_size));
  const std::uint64_t factor = config.factor();
  if (factor > kMaxFactor)
    throw ConfigError("merge_size", "patch_size * merge_size must be at most " +
                                        std::to_string(kMaxFactor) + ", got " +
                                        std::to_string(factor));
  if (config.max_pixels < factor * factor || config.max_pixels > kMaxPixelsCap)
    throw ConfigError("max_pixels", "must be " + std::to_string(factor * factor) + ".." +
                                        std::to_string(kMaxPixelsCap) + " (at least one " +
                                        std::to_string(factor) + "x" + std::to_string(factor) +
                                        " block), got " + std::to_string(config.max_pixels));
  if (config.min_pixels > config.max_pixels)
    throw ConfigError("min_pixels", "must not exceed max_pixels (" +
                                        std::to_string(config.max_pixels) + "), got " +
                                        std::to_string(config.min_pixels));
}

ImageResult<ResizeTarget> smart_resize(std::uint32_t height, std::uint32_t width,
                                       const VisionGeometryConfig& config) {
  validate(config);
  if (height == 0 || width == 0)
    return ImageError{ImageErrorKind::bad_geometry,
                      "image " + sides(height, width) + " has a zero side"};
  const std::uint64_t pixels = std::uint64_t{height} * width;
  if (pixels >= kMaxExactPixels)
    return ImageError{ImageErrorKind::bad_geometry,
                      "image " + sides(height, width) + " has 2^53 pixels or more"};
  // Python compares the float quotient; so does this, to refuse exactly the same images.
  const double h = height;
  const double w = width;
  if (std::max(h, w) / std::min(h, w) > kMaxAspectRatio)
    return ImageError{ImageErrorKind::bad_geometry, "image " + sides(height, width) +
                                                        " has an aspect ratio over " +
                                                        std::to_string(kMaxAspectRatio)};

  const std::uint32_t factor = config.factor();
  std::uint64_t h_bar = std::max<std::uint64_t>(factor, round_half_even(height, factor) * factor);
  std::uint64_t w_bar = std::max<std::uint64_t>(factor, round_half_even(width, factor) * factor);
  if (h_bar * w_bar > config.max_pixels) {
    const double beta =
        std::sqrt(static_cast<double>(pixels) / static_cast<double>(config.max_pixels));
    h_bar = std::max(factor, floor_to_factor(h / beta, factor));
    w_bar = std::max(factor, floor_to_factor(w / beta, factor));
  } else if (h_bar * w_bar < config.min_pixels) {
    const double beta =
        std::sqrt(static_cast<double>(config.min_pixels) / static_cast<double>(pixels));
    h_bar = ceil_to_factor(h * beta, factor);
    w_bar = ceil_to_factor(w * beta, factor);
  }

  ResizeTarget target;
  target.height = static_cast<std::uint32_t>(h_bar);
  target.width = static_cast<std::uint32_t>(w_bar);
  target.grid.grid_h = target.height / config.patch_size;
  target.grid.grid_w = target.width / config.patch_size;
  target.grid.tokens = target.grid.patches() / (config.merge_size * config.merge_size);
  return target;
}

}  // namespace odbatch
