// The reference kernels: Pillow's loops, one multiply-add at a time. They run where no vector
// level is available and define the bytes every other level must reproduce.
#include <cstring>

#include "resample_kernels.hpp"

namespace odbatch::resample {
namespace {

std::uint8_t to_pixel(std::int32_t sum) {
  const std::int32_t shifted = sum >> kPrecisionBits;
  return static_cast<std::uint8_t>(shifted < 0 ? 0 : shifted > 255 ? 255 : shifted);
}

template <std::uint32_t kChannels>
void horizontal(const HorizontalPass& pass, const AxisView& axis) {
  const std::size_t in_stride = std::size_t{pass.source_width} * kChannels;
  const std::size_t out_stride = std::size_t{pass.target_width} * kChannels;
  for (std::uint32_t y = 0; y < pass.rows; ++y) {
    const std::uint8_t* in_row = pass.source + (pass.first_row + y) * in_stride;
    std::uint8_t* out_row = pass.target + y * out_stride;
    for (std::uint32_t x = 0; x < pass.target_width; ++x) {
      const std::int32_t* weights = axis.weights + std::size_t{x} * axis.taps;
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

void horizontal_rgb(const HorizontalPass& pass, const AxisView& axis, const ExpandedView&) {
  horizontal<3>(pass, axis);
}

void horizontal_grey(const HorizontalPass& pass, const AxisView& axis, const ExpandedView&) {
  horizontal<1>(pass, axis);
}

void vertical(const VerticalPass& pass, const AxisView& axis) {
  const std::size_t row_bytes = pass.row_bytes;
  for (std::uint32_t y = 0; y < pass.target_height; ++y) {
    const std::int32_t* weights = axis.weights + std::size_t{y} * axis.taps;
    const std::uint8_t* rows = pass.source + (axis.first[y] - pass.first_row) * row_bytes;
    const std::uint32_t count = axis.count[y];
    std::uint8_t* out_row = pass.target + y * row_bytes;
    for (std::size_t i = 0; i < row_bytes; ++i) {
      std::int32_t sum = kHalf;
      for (std::uint32_t t = 0; t < count; ++t) sum += rows[t * row_bytes + i] * weights[t];
      out_row[i] = to_pixel(sum);
    }
  }
}

void grey_to_rgb(const std::uint8_t* grey, std::size_t pixels, std::uint8_t* rgb) {
  for (std::size_t i = 0; i < pixels; ++i) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = grey[i];
}

}  // namespace

extern const Kernels kScalarKernels{0,        false,   horizontal_rgb, horizontal_grey,
                                    vertical, nullptr, grey_to_rgb};

}  // namespace odbatch::resample
