#include "odbatch/image/bicubic_resampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

constexpr double kSupport = 2.0;
constexpr double kA = -0.5;
// Pillow's precision for 8-bit images: sums of 255 * weights stay within int32.
constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr std::int32_t kHalf = std::int32_t{1} << (kPrecisionBits - 1);

double bicubic(double x) {
  x = std::fabs(x);
  if (x < 1.0) return ((kA + 2.0) * x - (kA + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * kA;
  return 0.0;
}

std::uint8_t to_pixel(std::int32_t sum) {
  return static_cast<std::uint8_t>(std::clamp(sum >> kPrecisionBits, 0, 255));
}

// Pillow's precompute_coeffs followed by normalize_coeffs_8bpc.
void compute_weights(std::uint32_t in_size, std::uint32_t out_size,
                     BicubicResampler::AxisWeights& axis, std::vector<double>& unnormalised) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = kSupport * filter_scale;
  axis.taps = static_cast<std::uint32_t>(std::ceil(support)) * 2 + 1;
  axis.first.resize(out_size);
  axis.count.resize(out_size);
  axis.weights.assign(std::size_t{out_size} * axis.taps, 0);
  unnormalised.resize(axis.taps);
  const double inverse_filter_scale = 1.0 / filter_scale;
  for (std::uint32_t i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    // Truncation toward zero, as Pillow's (int) casts, then clipped to the image.
    const auto lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(center - support + 0.5));
    const auto hi =
        std::min<std::int64_t>(in_size, static_cast<std::int64_t>(center + support + 0.5));
    const auto count = static_cast<std::uint32_t>(std::max<std::int64_t>(0, hi - lo));
    double total = 0.0;
    for (std::uint32_t t = 0; t < count; ++t) {
      const double w = bicubic((static_cast<double>(t + lo) - center + 0.5) * inverse_filter_scale);
      unnormalised[t] = w;
      total += w;
    }
    std::int32_t* weights = &axis.weights[std::size_t{i} * axis.taps];
    for (std::uint32_t t = 0; t < count; ++t) {
      const double normalised = total != 0.0 ? unnormalised[t] / total : unnormalised[t];
      const double fixed = normalised * (1 << kPrecisionBits);
      weights[t] = static_cast<std::int32_t>(fixed < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    axis.first[i] = static_cast<std::uint32_t>(lo);
    axis.count[i] = count;
  }
}

// Resizes `rows` rows of width `in_width` to `out_width`, reading from `source` row `first_row`.
template <std::uint32_t kChannels>
void resample_rows(const std::uint8_t* source, std::uint32_t in_width, std::uint32_t first_row,
                   std::uint32_t rows, const BicubicResampler::AxisWeights& axis,
                   std::uint32_t out_width, std::uint8_t* target) {
  const std::size_t in_stride = std::size_t{in_width} * kChannels;
  const std::size_t out_stride = std::size_t{out_width} * kChannels;
  for (std::uint32_t y = 0; y < rows; ++y) {
    const std::uint8_t* in_row = source + (first_row + y) * in_stride;
    std::uint8_t* out_row = target + y * out_stride;
    for (std::uint32_t x = 0; x < out_width; ++x) {
      const std::int32_t* weights = &axis.weights[std::size_t{x} * axis.taps];
      const std::uint8_t* in = in_row + std::size_t{axis.first[x]} * kChannels;
      // Named accumulators, not an array: GCC at -O2 keeps these in registers.
      std::int32_t r = kHalf;
      std::int32_t g = kHalf;
      std::int32_t b = kHalf;
      for (std::uint32_t t = 0; t < axis.count[x]; ++t, in += kChannels) {
        r += in[0] * weights[t];
        if constexpr (kChannels == 3) {
          g += in[1] * weights[t];
          b += in[2] * weights[t];
        }
      }
      out_row[x * kChannels] = to_pixel(r);
      if constexpr (kChannels == 3) {
        out_row[x * kChannels + 1] = to_pixel(g);
        out_row[x * kChannels + 2] = to_pixel(b);
      }
    }
  }
}

void resample_rows(std::uint32_t channels, const std::uint8_t* source, std::uint32_t in_width,
                   std::uint32_t first_row, std::uint32_t rows,
                   const BicubicResampler::AxisWeights& axis, std::uint32_t out_width,
                   std::uint8_t* target) {
  if (channels == 1)
    resample_rows<1>(source, in_width, first_row, rows, axis, out_width, target);
  else
    resample_rows<3>(source, in_width, first_row, rows, axis, out_width, target);
}

// Each output row is a weighted sum of whole source rows. Summing a fixed-size block of bytes at a
// time keeps the accumulators in registers and lets the compiler vectorise the inner loops.
void resample_columns(const std::uint8_t* source, std::size_t row_bytes,
                      const BicubicResampler::AxisWeights& axis, std::uint32_t out_height,
                      std::uint8_t* target) {
  constexpr std::size_t kBlock = 32;
  for (std::uint32_t y = 0; y < out_height; ++y) {
    const std::int32_t* weights = &axis.weights[std::size_t{y} * axis.taps];
    const std::uint8_t* rows = source + axis.first[y] * row_bytes;
    const std::uint32_t count = axis.count[y];
    std::uint8_t* out_row = target + y * row_bytes;
    std::size_t i = 0;
    for (; i + kBlock <= row_bytes; i += kBlock) {
      std::int32_t sums[kBlock];
      for (std::size_t k = 0; k < kBlock; ++k) sums[k] = kHalf;
      for (std::uint32_t t = 0; t < count; ++t) {
        const std::uint8_t* in = rows + t * row_bytes + i;
        const std::int32_t weight = weights[t];
        for (std::size_t k = 0; k < kBlock; ++k) sums[k] += in[k] * weight;
      }
      for (std::size_t k = 0; k < kBlock; ++k) out_row[i + k] = to_pixel(sums[k]);
    }
    for (; i < row_bytes; ++i) {
      std::int32_t sum = kHalf;
      for (std::uint32_t t = 0; t < count; ++t) sum += rows[t * row_bytes + i] * weights[t];
      out_row[i] = to_pixel(sum);
    }
  }
}

void check_extent(std::size_t bytes, std::uint32_t width, std::uint32_t height,
                  std::uint32_t channels, const char* which) {
  const std::size_t needed = std::size_t{width} * height * channels;
  if (width == 0 || height == 0 || bytes != needed)
    throw std::invalid_argument(std::string("BicubicResampler::resize: ") + which + " " +
                                std::to_string(width) + "x" + std::to_string(height) + "x" +
                                std::to_string(channels) + " needs " + std::to_string(needed) +
                                " bytes (and no zero side), got " + std::to_string(bytes));
}

}  // namespace

void BicubicResampler::resize(std::span<const std::uint8_t> source, std::uint32_t source_width,
                              std::uint32_t source_height, std::span<std::uint8_t> target,
                              std::uint32_t target_width, std::uint32_t target_height,
                              std::uint32_t channels) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("BicubicResampler::resize: " + std::to_string(channels) +
                                " channels; 1 (grey) or 3 (RGB) are supported");
  check_extent(source.size(), source_width, source_height, channels, "source");
  check_extent(target.size(), target_width, target_height, channels, "target");
  const bool resize_rows = source_width != target_width;
  const bool resize_columns = source_height != target_height;
  if (!resize_rows && !resize_columns) {
    std::memcpy(target.data(), source.data(), source.size());
    return;
  }
  const std::size_t target_row_bytes = std::size_t{target_width} * channels;
  if (!resize_columns) {
    compute_weights(source_width, target_width, horizontal_, unnormalised_);
    resample_rows(channels, source.data(), source_width, 0, source_height, horizontal_,
                  target_width, target.data());
    return;
  }
  compute_weights(source_height, target_height, vertical_, unnormalised_);
  if (!resize_rows) {
    resample_columns(source.data(), target_row_bytes, vertical_, target_height, target.data());
    return;
  }
  // Only the source rows some output row reads are resized horizontally.
  compute_weights(source_width, target_width, horizontal_, unnormalised_);
  const std::uint32_t first_row = vertical_.first.front();
  const std::uint32_t end_row = vertical_.first.back() + vertical_.count.back();
  for (auto& first : vertical_.first) first -= first_row;
  intermediate_.resize(std::size_t{end_row - first_row} * target_row_bytes);
  resample_rows(channels, source.data(), source_width, first_row, end_row - first_row, horizontal_,
                target_width, intermediate_.data());
  resample_columns(intermediate_.data(), target_row_bytes, vertical_, target_height, target.data());
}

}  // namespace odbatch
