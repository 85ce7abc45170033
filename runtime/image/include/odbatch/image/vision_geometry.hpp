#pragma once
// Visual-token geometry of Qwen2-VL: the size an image is resized to and the patch grid it becomes.
// A pure function of the image's height and width, so the token count is known from the JPEG
// header alone, before anything is decoded.
#include <cstdint>

#include "odbatch/core/config.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

struct VisionGeometryConfig {
  std::uint32_t patch_size = 14;              // ViT patch side in pixels
  std::uint32_t merge_size = 2;               // merge_size x merge_size patches become one token
  std::uint64_t min_pixels = 56 * 56;         // Qwen2-VL's image processor default
  std::uint64_t max_pixels = 28 * 28 * 1280;  // the model card's recommended cap (1,003,520)

  // Resized sides are multiples of this: 28 by default.
  std::uint32_t factor() const { return patch_size * merge_size; }

  friend bool operator==(const VisionGeometryConfig&, const VisionGeometryConfig&) = default;
};

// Throws ConfigError naming the first invalid field. Limits keep every product in range:
// patch_size 1..1024, merge_size 1..16, factor() <= 1024, min_pixels <= max_pixels,
// factor()^2 <= max_pixels <= 2^30.
void validate(const VisionGeometryConfig& config);

// Images wider or taller than this many times their other side are refused, as in Qwen2-VL.
inline constexpr std::uint32_t kMaxAspectRatio = 200;

struct ResizeTarget {
  std::uint32_t height = 0;  // a multiple of factor()
  std::uint32_t width = 0;   // a multiple of factor()
  ImageGrid grid;

  friend bool operator==(const ResizeTarget&, const ResizeTarget&) = default;
};

// Qwen2-VL's smart_resize, reproduced to the bit (the same double operations in the same order,
// Python's round-half-to-even):
//   h_bar = max(f, round(h / f) * f), w_bar likewise;
//   if h_bar * w_bar > max_pixels: beta = sqrt(h * w / max_pixels),
//     h_bar = max(f, floor(h / beta / f) * f), w_bar likewise;
//   else if h_bar * w_bar < min_pixels: beta = sqrt(min_pixels / (h * w)),
//     h_bar = ceil(h * beta / f) * f, w_bar likewise.
// A zero side, an aspect ratio max/min over kMaxAspectRatio, or h * w >= 2^53 (where doubles stop
// being exact) is an ImageErrorKind::bad_geometry error. Throws ConfigError for an invalid config.
ImageResult<ResizeTarget> smart_resize(std::uint32_t height, std::uint32_t width,
                                       const VisionGeometryConfig& config = {});

}  // namespace odbatch
