#pragma once
// Qwen2-VL's pixel_values from a resized uint8 RGB image, value for value what Hugging Face's
// Qwen2VLImageProcessor computes after its resize (transformers' image_transforms, numpy):
//   rescale:   x = float32(float64(u) * rescale_factor)
//   normalise: y = (x - float32(mean[c])) / float32(std[c]), in float32
//   patchify:  the image repeated temporal_patch_size times, reshaped to (grid_t, T, C,
//              grid_h / merge, merge, P, grid_w / merge, merge, P), transposed by
//              (0, 3, 6, 4, 7, 2, 1, 5, 8) and flattened to (grid_h * grid_w, C * T * P * P).
// A value depends only on its channel and its uint8 input, so the writer computes each channel's
// 256 possible values once, in exactly that arithmetic, and the per-pixel work is a table lookup
// written straight in patch order, a vector of lookups per store where SSE2 is there: float32
// output equals the reference bit for bit. bfloat16 is the float32 value rounded to nearest even,
// as torch's .to(torch.bfloat16).
#include <array>
#include <cstdint>
#include <span>

#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/vision_geometry.hpp"

namespace odbatch {

// bfloat16 bits of a float32, rounded to nearest even (NaN stays a quiet NaN).
std::uint16_t to_bfloat16(float value);

// Immutable once built: one may serve any number of threads.
class PixelValuesWriter {
 public:
  // Throws ConfigError for an invalid config or geometry, or a uint8 dtype (nothing to write).
  PixelValuesWriter(const PixelValuesConfig& config, const VisionGeometryConfig& geometry);

  PixelDtype dtype() const { return dtype_; }
  // channels * temporal_patch_size * patch_size^2: 1176 for Qwen2-VL.
  std::uint32_t values_per_patch() const { return values_per_patch_; }
  // Bytes of pixel_values for a width x height image (sides multiples of the geometry's factor).
  std::size_t bytes_for(std::uint32_t width, std::uint32_t height) const;

  // `rgb` holds width * height * 3 bytes (row-major HWC) and `out` bytes_for(width, height);
  // both sides are multiples of patch_size * merge_size. Throws std::invalid_argument otherwise.
  void write(std::span<const std::uint8_t> rgb, std::uint32_t width, std::uint32_t height,
             std::span<std::uint8_t> out) const;

  // Rows of one block row (patch_size * merge_size rows, the values of which are contiguous in
  // the output): `block_row` of a width x height image, from its rows at `rgb` (width * 3 bytes
  // each) into `out`, bytes_for(width, height) bytes. What write() does one block row at a time,
  // so a resize can hand its rows over while they are in cache. Throws std::invalid_argument for
  // sides that are not multiples or a block row past the image.
  void write_block_row(const std::uint8_t* rgb, std::uint32_t width, std::uint32_t height,
                       std::uint32_t block_row, std::span<std::uint8_t> out) const;
  // patch_size * merge_size.
  std::uint32_t block_rows() const { return patch_size_ * merge_size_; }

 private:
  void check_sizes(std::uint32_t width, std::uint32_t height, std::size_t out_bytes) const;
  template <class Value, class Entry>
  void write_block(const std::uint8_t* rgb, std::uint32_t width, const Entry* table,
                   Value* out) const;

  PixelDtype dtype_;
  std::uint32_t patch_size_;
  std::uint32_t merge_size_;
  std::uint32_t temporal_patch_size_;
  std::uint32_t values_per_patch_;
  std::array<float, 3 * 256> float32_table_{};  // [channel][uint8 value]
  // The bfloat16 bits minus 0x8000, so that SSE2's signed 32-to-16-bit pack keeps them whole.
  std::array<std::int32_t, 3 * 256> bfloat16_table_{};
};

}  // namespace odbatch
