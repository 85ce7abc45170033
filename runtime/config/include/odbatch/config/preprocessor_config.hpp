#pragma once
// A model's preprocessor_config.json: the Hugging Face image processor's settings that [images]
// mirrors, read so that a run uses the model's own values (`[images] preprocessor_config`), with
// any [images] key given beside it taking precedence.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/vision_geometry.hpp"

namespace odbatch {

// Preprocessor files are a few hundred bytes; anything near this is not one.
inline constexpr std::uint64_t kMaxPreprocessorConfigBytes = 1 << 20;

// The values a preprocessor_config.json sets; each is absent when the file does not set it.
struct PreprocessorConfig {
  std::optional<std::uint64_t> min_pixels;
  std::optional<std::uint64_t> max_pixels;
  std::optional<std::uint32_t> patch_size;
  std::optional<std::uint32_t> merge_size;
  std::optional<std::uint32_t> temporal_patch_size;
  std::optional<double> rescale_factor;
  std::optional<std::array<double, 3>> image_mean;
  std::optional<std::array<double, 3>> image_std;
};

// Reads `file`: Qwen2-VL's and Qwen2.5-VL's layout (min_pixels and max_pixels at the top level)
// and newer files' `size` {"shortest_edge", "longest_edge"}, which hold the same pixel counts
// (the top-level keys win where both are present); `do_rescale: false` means a rescale_factor of
// 1, `do_normalize: false` a mean of 0 and a std of 1. Other keys are ignored. Throws ConfigError
// for "images.preprocessor_config" naming the file and, for a bad value, its key.
PreprocessorConfig read_preprocessor_config(const std::filesystem::path& file);

// The [images] keys a preprocessor file can set, by their [images] names.
const std::set<std::string>& preprocessor_config_keys();

// Sets each value `values` has into `geometry` and `pixel_values`, except those whose [images]
// key is in `explicit_keys`.
void apply_preprocessor_config(const PreprocessorConfig& values,
                               const std::set<std::string>& explicit_keys,
                               VisionGeometryConfig& geometry, PixelValuesConfig& pixel_values);

}  // namespace odbatch
