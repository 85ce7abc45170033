#include "odbatch/image/pixel_values_writer.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "odbatch/core/config.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace odbatch {
namespace {

constexpr std::uint32_t kChannels = 3;
constexpr std::int32_t kBfloat16Bias = 0x8000;

// One patch row of one channel: `count` values looked up from every third byte at `source`.
// Stores of whole vectors (4 floats, 8 bfloat16) take about half the time of a store per value;
// the lookups and so the values are the same.
void lookup_row(const std::uint8_t* source, std::uint32_t count, const float* table,
                float* target) {
  std::uint32_t x = 0;
#if defined(__SSE2__)
  for (; x + 4 <= count; x += 4) {
    const std::uint8_t* at = source + 3 * x;
    _mm_storeu_ps(target + x, _mm_setr_ps(table[at[0]], table[at[3]], table[at[6]], table[at[9]]));
  }
#endif
  for (; x < count; ++x) target[x] = table[source[3 * x]];
}

void lookup_row(const std::uint8_t* source, std::uint32_t count, const std::int32_t* biased_table,
                std::uint16_t* target) {
  std::uint32_t x = 0;
#if defined(__SSE2__)
  const __m128i unbias = _mm_set1_epi16(static_cast<short>(kBfloat16Bias));
  for (; x + 8 <= count; x += 8) {
    const std::uint8_t* at = source + 3 * x;
    const __m128i low = _mm_setr_epi32(biased_table[at[0]], biased_table[at[3]],
                                       biased_table[at[6]], biased_table[at[9]]);
    const __m128i high = _mm_setr_epi32(biased_table[at[12]], biased_table[at[15]],
                                        biased_table[at[18]], biased_table[at[21]]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(target + x),
                     _mm_xor_si128(_mm_packs_epi32(low, high), unbias));
  }
#endif
  for (; x < count; ++x)
    target[x] = static_cast<std::uint16_t>(biased_table[source[3 * x]] + kBfloat16Bias);
}

bool finite_float32(double value) {
  return std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max();
}

std::string channel_value(const char* field, std::size_t channel) {
  return std::string(field) + "[" + std::to_string(channel) + "]";
}

}  // namespace

void validate(const PixelValuesConfig& config) {
  if (!finite_float32(config.rescale_factor) || config.rescale_factor <= 0.0)
    throw ConfigError("rescale_factor", "must be a positive finite number, got " +
                                            std::to_string(config.rescale_factor));
  for (std::size_t c = 0; c < kChannels; ++c) {
    if (!finite_float32(config.image_mean[c]))
      throw ConfigError("image_mean", channel_value("must be finite (as float32): image_mean", c) +
                                          " is " + std::to_string(config.image_mean[c]));
    const float deviation = static_cast<float>(config.image_std[c]);
    if (!finite_float32(config.image_std[c]) || !(deviation >= std::numeric_limits<float>::min()))
      throw ConfigError("image_std",
                        channel_value("must be positive and a normal float32: image_std", c) +
                            " is " + std::to_string(config.image_std[c]));
  }
  if (config.temporal_patch_size == 0 || config.temporal_patch_size > kMaxTemporalPatchSize)
    throw ConfigError("temporal_patch_size", "must be between 1 and " +
                                                 std::to_string(kMaxTemporalPatchSize) + ", got " +
                                                 std::to_string(config.temporal_patch_size));
}

std::uint16_t to_bfloat16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040);
  const std::uint32_t round_to_even = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + round_to_even) >> 16);
}

PixelValuesWriter::PixelValuesWriter(const PixelValuesConfig& config,
                                     const VisionGeometryConfig& geometry)
    : dtype_(config.dtype),
      patch_size_(geometry.patch_size),
      merge_size_(geometry.merge_size),
      temporal_patch_size_(config.temporal_patch_size),
      values_per_patch_(odbatch::values_per_patch(config, geometry)) {
  validate(config);
  validate(geometry);
  if (dtype_ == PixelDtype::uint8)
    throw ConfigError("pixel_values", "uint8 keeps the decoded pixels: nothing to write");
  for (std::uint32_t c = 0; c < kChannels; ++c) {
    // The reference's arithmetic and roundings, one operation at a time: numpy's rescale
    // multiplies in float64 and casts to float32; normalize casts mean and std to the image's
    // float32 and subtracts and divides in float32.
    const auto mean = static_cast<float>(config.image_mean[c]);
    const auto deviation = static_cast<float>(config.image_std[c]);
    for (std::uint32_t u = 0; u < 256; ++u) {
      const auto rescaled = static_cast<float>(static_cast<double>(u) * config.rescale_factor);
      const float centred = rescaled - mean;
      const float normalised = centred / deviation;
      float32_table_[c * 256 + u] = normalised;
      bfloat16_table_[c * 256 + u] = std::int32_t{to_bfloat16(normalised)} - kBfloat16Bias;
    }
  }
}

std::size_t PixelValuesWriter::bytes_for(std::uint32_t width, std::uint32_t height) const {
  const std::size_t patches = std::size_t{width / patch_size_} * (height / patch_size_);
  return patches * values_per_patch_ * element_bytes(dtype_);
}

void PixelValuesWriter::check_sizes(std::uint32_t width, std::uint32_t height,
                                    std::size_t out_bytes) const {
  const std::uint32_t factor = block_rows();
  if (width == 0 || height == 0 || width % factor != 0 || height % factor != 0 ||
      out_bytes != bytes_for(width, height))
    throw std::invalid_argument(
        "PixelValuesWriter: a " + std::to_string(width) + "x" + std::to_string(height) +
        " image needs sides that are multiples of " + std::to_string(factor) + " and " +
        std::to_string(bytes_for(width, height)) + " output bytes; got " +
        std::to_string(out_bytes));
}

void PixelValuesWriter::write(std::span<const std::uint8_t> rgb, std::uint32_t width,
                              std::uint32_t height, std::span<std::uint8_t> out) const {
  check_sizes(width, height, out.size());
  if (rgb.size() != std::size_t{width} * height * kChannels)
    throw std::invalid_argument("PixelValuesWriter::write: a " + std::to_string(width) + "x" +
                                std::to_string(height) + " image has " +
                                std::to_string(std::size_t{width} * height * kChannels) +
                                " RGB bytes; got " + std::to_string(rgb.size()));
  const std::size_t block_bytes = std::size_t{block_rows()} * width * kChannels;
  for (std::uint32_t block_row = 0; block_row < height / block_rows(); ++block_row)
    write_block_row(rgb.data() + block_row * block_bytes, width, height, block_row, out);
}

void PixelValuesWriter::write_block_row(const std::uint8_t* rgb, std::uint32_t width,
                                        std::uint32_t height, std::uint32_t block_row,
                                        std::span<std::uint8_t> out) const {
  check_sizes(width, height, out.size());
  if (block_row >= height / block_rows())
    throw std::invalid_argument("PixelValuesWriter::write_block_row: block row " +
                                std::to_string(block_row) + " of a " + std::to_string(height) +
                                "-row image");
  // Each block row's patches follow the previous block rows' whole.
  const std::size_t offset = std::size_t{block_row} * (width / patch_size_) * merge_size_ *
                             values_per_patch_ * element_bytes(dtype_);
  // The output is a byte buffer from an allocation, which provides storage for the values.
  if (dtype_ == PixelDtype::float32)
    write_block(rgb, width, float32_table_.data(), reinterpret_cast<float*>(out.data() + offset));
  else
    write_block(rgb, width, bfloat16_table_.data(),
                reinterpret_cast<std::uint16_t*>(out.data() + offset));
}

// One block row's patches in the processor's order: its merge blocks left to right, the
// merge_size^2 patches of a block row by row; within a patch, channel, then time, then the
// patch's rows and columns. Frame 0 is looked up, the other frames are copies of it.
template <class Value, class Entry>
void PixelValuesWriter::write_block(const std::uint8_t* rgb, std::uint32_t width,
                                    const Entry* table, Value* out) const {
  const std::uint32_t p = patch_size_;
  const std::uint32_t m = merge_size_;
  const std::size_t row_bytes = std::size_t{width} * kChannels;
  const std::size_t frame_values = std::size_t{p} * p;
  for (std::uint32_t block_x = 0; block_x < width / (p * m); ++block_x)
    for (std::uint32_t merge_y = 0; merge_y < m; ++merge_y)
      for (std::uint32_t merge_x = 0; merge_x < m; ++merge_x) {
        const std::size_t top = std::size_t{merge_y} * p;
        const std::size_t left = std::size_t{block_x * m + merge_x} * p;
        const std::uint8_t* patch = rgb + top * row_bytes + left * kChannels;
        for (std::uint32_t c = 0; c < kChannels; ++c) {
          const Entry* lookup = table + c * 256;
          Value* frame = out;
          for (std::uint32_t y = 0; y < p; ++y)
            lookup_row(patch + y * row_bytes + c, p, lookup, frame + std::size_t{y} * p);
          for (std::uint32_t t = 1; t < temporal_patch_size_; ++t)
            std::memcpy(frame + t * frame_values, frame, frame_values * sizeof(Value));
          out += temporal_patch_size_ * frame_values;
        }
      }
}

}  // namespace odbatch
