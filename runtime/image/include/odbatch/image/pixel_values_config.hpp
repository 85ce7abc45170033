#pragma once
// How the image decoders turn resized pixels into what the trainer receives: uint8 RGB as
// decoded, or Qwen2-VL's model-ready pixel_values (PixelValuesWriter). Apart from the writer, so
// that a configuration holds it without the writer.
#include <array>
#include <cstdint>

#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// The image processor's settings after its resize (Qwen2-VL's preprocessor_config.json):
// rescale_factor, image_mean, image_std and temporal_patch_size; the patch and merge sizes are
// the geometry's (VisionGeometryConfig). The defaults are Qwen2-VL's and Qwen2.5-VL's: OpenAI
// CLIP's mean and standard deviation.
struct PixelValuesConfig {
  // uint8 keeps the decoded pixels; float32 and bfloat16 make pixel_values.
  PixelDtype dtype = PixelDtype::uint8;
  double rescale_factor = 1.0 / 255.0;
  std::array<double, 3> image_mean{0.48145466, 0.4578275, 0.40821073};
  std::array<double, 3> image_std{0.26862954, 0.26130258, 0.27577711};
  // Frames a patch spans in time; a still image is repeated to fill them.
  std::uint32_t temporal_patch_size = 2;

  friend bool operator==(const PixelValuesConfig&, const PixelValuesConfig&) = default;
};

inline constexpr std::uint32_t kMaxTemporalPatchSize = 16;

// channels * temporal_patch_size * patch_size^2 (1176 for Qwen2-VL): a pixel_values row; 0 for
// uint8.
inline std::uint32_t values_per_patch(const PixelValuesConfig& config,
                                      const VisionGeometryConfig& geometry) {
  if (config.dtype == PixelDtype::uint8) return 0;
  return 3 * config.temporal_patch_size * geometry.patch_size * geometry.patch_size;
}

// Throws ConfigError naming the first invalid field (rescale_factor, image_mean, image_std,
// temporal_patch_size): the factor and every mean must be finite floats once rounded to float32,
// every standard deviation a positive normal float32, the temporal patch size 1..16.
void validate(const PixelValuesConfig& config);

}  // namespace odbatch
