#pragma once
// Resizes packed RGB or grey images (row-major HWC, uint8) with PIL's BICUBIC filter, the one
// Qwen2-VL's image processor uses, and produces PIL's exact output (Pillow 9.4 checked bit for
// bit).
//
// The filter, as in Pillow's Resample.c:
// - Kernel: Keys cubic convolution with a = -0.5,
//     k(x) = (a+2)|x|^3 - (a+3)|x|^2 + 1     for |x| < 1,
//     k(x) = a|x|^3 - 5a|x|^2 + 8a|x| - 4a   for 1 <= |x| < 2,  0 beyond.
// - Antialiasing: when shrinking by s = in/out > 1 the kernel is stretched by s (support 2s
//   source pixels, k(x/s)); when enlarging it is used as is (support 2).
// - Output pixel i is centred at source coordinate (i + 0.5) * in/out; taps are the source pixels
//   whose centres lie within the support, clipped at the image edges; weights are normalised to
//   sum to 1, then turned into 22-bit fixed point (rounded half away from zero).
// - Separable: a horizontal pass (only over the source rows the vertical pass needs) into a uint8
//   intermediate, then a vertical pass; each pass adds 2^21, shifts right by 22 and clamps to
//   0..255, so every output value is rounded to nearest and clamped.
// Pillow always runs the horizontal pass first, into a uint8 intermediate: the order is part of the
// bytes (the other order rounds different sums), so it is kept whatever the sizes.
// The passes run as vector kernels (AVX-512, AVX2 or SSE4.1, see simd_level.hpp) with the same
// 22-bit integer weights and sums: integer additions in any order give the same bytes.
// Pixel values stay uint8 in 0..255; PixelValuesWriter rescales, normalises and patchifies them
// when a pipeline asks for model-ready pixel_values.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "odbatch/image/rgb_band_sink.hpp"
#include "odbatch/image/simd_level.hpp"

namespace odbatch {

// Not thread-safe: it keeps weight tables (per source/target size pair, the most recent few) and
// intermediate rows between calls, so resizing repeatedly allocates only when an image needs more
// room than any before it. Every SimdLevel gives the same bytes.
class BicubicResampler {
 public:
  // Throws ConfigError when `level` is above what this CPU supports.
  explicit BicubicResampler(SimdLevel level = default_simd_level());
  BicubicResampler(BicubicResampler&&) noexcept;
  BicubicResampler& operator=(BicubicResampler&&) noexcept;
  ~BicubicResampler();

  // `source` holds source_width * source_height * channels bytes and `target` target_width *
  // target_height * channels; every side is at least 1 and channels is 1 (grey) or 3 (RGB).
  // Throws std::invalid_argument otherwise. Channels are resized independently, so a grey image
  // resized and then copied into R, G and B equals the RGB image resized.
  void resize(std::span<const std::uint8_t> source, std::uint32_t source_width,
              std::uint32_t source_height, std::span<std::uint8_t> target,
              std::uint32_t target_width, std::uint32_t target_height, std::uint32_t channels = 3);

  // A grey source resized and written as RGB with equal channels (target_width * target_height
  // * 3 bytes), row by row, without a resized grey image in between.
  void resize_grey_to_rgb(std::span<const std::uint8_t> source, std::uint32_t source_width,
                          std::uint32_t source_height, std::span<std::uint8_t> rgb_target,
                          std::uint32_t target_width, std::uint32_t target_height);

  // A grey (channels 1) or RGB (3) source resized, or copied where its size is the target's, and
  // handed to `sink` as RGB bands of sink.band_rows() rows: the same bytes resize() and
  // resize_grey_to_rgb() write, through one band-sized buffer instead of a whole image.
  void resize_in_bands(std::span<const std::uint8_t> source, std::uint32_t source_width,
                       std::uint32_t source_height, std::uint32_t channels,
                       std::uint32_t target_width, std::uint32_t target_height, RgbBandSink& sink);

  SimdLevel simd_level() const { return level_; }

 private:
  struct State;
  SimdLevel level_;
  std::unique_ptr<State> state_;
};

}  // namespace odbatch
