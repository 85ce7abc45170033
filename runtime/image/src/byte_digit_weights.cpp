#include "byte_digit_weights.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace odbatch::resample {
namespace {

constexpr std::uint32_t kTapsPerGroup = 4;  // a 32-bit lane of bytes
constexpr std::uint32_t kWindowBytes = 64;
constexpr std::uint32_t kTailTaps = 2;  // 16-bit values in a 32-bit lane
constexpr std::int32_t kTailWeightLimit = 32767;

std::uint32_t groups_for(std::uint32_t taps) {
  return (taps + kTapsPerGroup - 1) / kTapsPerGroup;
}

// How an output's taps divide between a block's groups and its tail: the first `skipped` and
// those past skipped + held go to the tail, the `held` between them to the groups.
struct TapSplit {
  std::uint32_t skipped = 0;
  std::uint32_t held = 0;
};

// Output x's taps in `groups` groups and, where `tail`, up to two taps of 16-bit weight at the
// window's ends; nullopt where they do not fit.
std::optional<TapSplit> split_taps(const AxisView& axis, std::uint32_t x, std::uint32_t groups,
                                   bool tail) {
  const std::uint32_t count = axis.count[x];
  const std::uint32_t capacity = groups * kTapsPerGroup;
  if (count <= capacity) return TapSplit{0, count};
  const std::uint32_t excess = count - capacity;
  if (!tail || excess > kTailTaps) return std::nullopt;
  const std::int32_t* weights = axis.weights + std::size_t{x} * axis.taps;
  const auto small = [&](std::uint32_t t) { return std::abs(weights[t]) <= kTailWeightLimit; };
  for (std::uint32_t skipped = 0; skipped <= excess; ++skipped) {
    bool fits = true;
    for (std::uint32_t t = 0; t < skipped; ++t) fits = fits && small(t);
    for (std::uint32_t t = skipped + capacity; t < count; ++t) fits = fits && small(t);
    if (fits) return TapSplit{skipped, capacity};
  }
  return std::nullopt;
}

// Appends the block of output bytes from `at` with `groups` groups and, where `tail`, a tail.
// Returns false, having appended nothing, where some output's taps do not fit.
bool add_block(const AxisView& axis, std::uint32_t out_size, std::uint32_t channels,
               std::uint32_t at, std::uint32_t groups, bool tail, GatherWeights& gather) {
  const std::uint32_t out_bytes = out_size * channels;
  const std::uint32_t base = axis.first[at / channels];
  TapSplit splits[kGatherBlock];
  std::uint32_t tail_first = kNoTail;
  for (std::uint32_t j = 0; j < kGatherBlock; ++j) {
    const std::uint32_t x = std::min(at + j, out_bytes - 1) / channels;
    const auto split = split_taps(axis, x, groups, tail);
    if (!split) return false;
    splits[j] = *split;
    if (split->held < axis.count[x]) {
      const std::uint32_t first_tail_tap = axis.first[x] + (split->skipped > 0 ? 0 : split->held);
      tail_first = std::min(tail_first, first_tail_tap * channels);
    }
  }

  std::uint8_t indices[kWindowBytes] = {};
  std::uint8_t tail_indices[kWindowBytes] = {};
  std::int16_t tail_weights[kWindowBytes / 2] = {};
  const std::size_t digits_at = gather.digits.size();
  gather.digits.resize(digits_at + std::size_t{groups} * 3 * kWindowBytes, 0);
  std::int8_t* digits = gather.digits.data() + digits_at;
  const auto fail = [&] {
    gather.digits.resize(digits_at);
    return false;
  };
  for (std::uint32_t j = 0; j < kGatherBlock; ++j) {
    const std::uint32_t byte = std::min(at + j, out_bytes - 1);
    const std::uint32_t x = byte / channels;
    const std::uint32_t channel = byte % channels;
    const TapSplit split = splits[j];
    const std::int32_t* weights = axis.weights + std::size_t{x} * axis.taps;
    for (std::uint32_t k = 0; k < kTapsPerGroup; ++k) {
      const std::uint32_t index = (axis.first[x] + split.skipped - base + k) * channels + channel;
      if (index >= kWindowBytes) return fail();
      indices[j * kTapsPerGroup + k] = static_cast<std::uint8_t>(index);
    }
    for (std::uint32_t t = 0; t < split.held; ++t) {
      const auto bytes = split_into_bytes(weights[split.skipped + t]);
      for (std::uint32_t d = 0; d < 3; ++d)
        digits[((t / kTapsPerGroup) * 3 + d) * kWindowBytes + j * kTapsPerGroup +
               t % kTapsPerGroup] = bytes[d];
    }
    std::uint32_t slot = 0;
    for (std::uint32_t t = 0; t < axis.count[x]; ++t) {
      if (t >= split.skipped && t < split.skipped + split.held) continue;
      const std::uint32_t index = (axis.first[x] + t) * channels + channel - tail_first;
      if (index >= kWindowBytes) return fail();
      tail_indices[j * kTapsPerGroup + 2 * slot] = static_cast<std::uint8_t>(index);
      tail_weights[2 * j + slot] = static_cast<std::int16_t>(weights[t]);
      ++slot;
    }
  }
  gather.window_first.push_back(base * channels);
  gather.groups.push_back(groups);
  gather.first_vector.push_back(static_cast<std::uint32_t>(digits_at / kWindowBytes));
  gather.indices.insert(gather.indices.end(), indices, indices + kWindowBytes);
  gather.tail_first.push_back(tail_first);
  gather.tail_indices.insert(gather.tail_indices.end(), tail_indices, tail_indices + kWindowBytes);
  gather.tail_weights.insert(gather.tail_weights.end(), tail_weights,
                             tail_weights + kWindowBytes / 2);
  return true;
}

}  // namespace

std::array<std::int8_t, 3> split_into_bytes(std::int32_t weight) {
  std::array<std::int8_t, 3> digits{};
  std::int32_t rest = weight;
  for (int k = 0; k < 2; ++k) {
    const std::int32_t low = ((rest + 128) & 255) - 128;
    digits[k] = static_cast<std::int8_t>(low);
    rest = (rest - low) / 256;
  }
  if (rest < -128 || rest > 127)
    throw std::logic_error("BicubicResampler: weight " + std::to_string(weight) +
                           " needs more than three signed bytes");
  digits[2] = static_cast<std::int8_t>(rest);
  return digits;
}

void build_byte_digits(const AxisView& axis, std::uint32_t out_size, ByteDigits& split) {
  split.built = true;
  split.groups_per_output = groups_for(axis.taps);
  split.groups.resize(out_size);
  split.digits.assign(std::size_t{out_size} * split.groups_per_output * 3, 0);
  for (std::uint32_t y = 0; y < out_size; ++y) {
    split.groups[y] = groups_for(axis.count[y]);
    std::int32_t* words = &split.digits[std::size_t{y} * split.groups_per_output * 3];
    for (std::uint32_t t = 0; t < axis.count[y]; ++t) {
      const auto digits = split_into_bytes(axis.weights[std::size_t{y} * axis.taps + t]);
      for (std::uint32_t d = 0; d < 3; ++d)
        reinterpret_cast<std::int8_t*>(&words[(t / kTapsPerGroup) * 3 + d])[t % kTapsPerGroup] =
            digits[d];
    }
  }
}

// Block b covers output bytes [at, at + kGatherBlock); lane j is byte at + j (the last byte for
// lanes past a row shorter than a block). A block first tries one group fewer than its longest
// window needs, with a tail, then without.
void build_gather_weights(const AxisView& axis, std::uint32_t out_size, std::uint32_t channels,
                          GatherWeights& gather) {
  gather = GatherWeights{};
  gather.built = true;
  const std::uint32_t out_bytes = out_size * channels;
  const std::uint32_t blocks = (out_bytes + kGatherBlock - 1) / kGatherBlock;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const std::uint32_t at =
        out_bytes >= kGatherBlock ? std::min(b * kGatherBlock, out_bytes - kGatherBlock) : 0;
    std::uint32_t longest = 0;
    for (std::uint32_t j = 0; j < kGatherBlock; ++j)
      longest = std::max(longest, axis.count[std::min(at + j, out_bytes - 1) / channels]);
    const std::uint32_t groups = groups_for(longest);
    const bool added =
        (groups >= 2 && add_block(axis, out_size, channels, at, groups - 1, true, gather)) ||
        add_block(axis, out_size, channels, at, groups, false, gather);
    if (!added) {
      gather = GatherWeights{};
      gather.built = true;
      return;  // blocks stays 0
    }
  }
  gather.blocks = blocks;
}

}  // namespace odbatch::resample
