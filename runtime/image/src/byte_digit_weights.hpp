#pragma once
// An axis's fixed-point weights laid out as the byte dot-product kernels (VNNI) multiply them:
// split into signed bytes (resample::ByteDigitView) for the vertical pass, and as per-block byte
// gathers (resample::GatherView) for the horizontal one.
#include <array>
#include <cstdint>
#include <vector>

#include "resample_kernels.hpp"

namespace odbatch::resample {

// w = d[0] + 256 * d[1] + 65536 * d[2], each digit in -128..127. Throws std::logic_error for a
// weight that needs more (none of Pillow's: normalised weights stay under 2).
std::array<std::int8_t, 3> split_into_bytes(std::int32_t weight);

// The storage behind a ByteDigitView.
struct ByteDigits {
  bool built = false;
  std::uint32_t groups_per_output = 0;
  std::vector<std::uint32_t> groups;
  std::vector<std::int32_t> digits;

  ByteDigitView view() const { return {groups_per_output, groups.data(), digits.data()}; }
};

// The storage behind a GatherView.
struct GatherWeights {
  bool built = false;
  std::uint32_t blocks = 0;  // 0: some block's taps span more than a window
  std::vector<std::uint32_t> window_first;
  std::vector<std::uint32_t> groups;
  std::vector<std::uint32_t> first_vector;
  std::vector<std::uint8_t> indices;
  std::vector<std::int8_t> digits;
  std::vector<std::uint32_t> tail_first;
  std::vector<std::uint8_t> tail_indices;
  std::vector<std::int16_t> tail_weights;

  GatherView view() const {
    return {blocks,
            window_first.data(),
            groups.data(),
            first_vector.data(),
            indices.data(),
            digits.data(),
            tail_first.data(),
            tail_indices.data(),
            tail_weights.data()};
  }
};

// `axis` (out_size outputs) split into bytes, four taps a group, into `split`.
void build_byte_digits(const AxisView& axis, std::uint32_t out_size, ByteDigits& split);

// `axis` laid out for gathers from rows of `channels` bytes a pixel, into `gather`.
void build_gather_weights(const AxisView& axis, std::uint32_t out_size, std::uint32_t channels,
                          GatherWeights& gather);

}  // namespace odbatch::resample
