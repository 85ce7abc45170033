#pragma once
// Encoded frames in the codecs' tests: printed as hex (golden bytes), and edited at random (what a
// decoder must refuse or read without crashing, reproducibly from a seed).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/core/split_mix64.hpp"

namespace odbatch::test {

// "0a ff ...": each byte as two hex digits and a space.
inline std::string hex(const std::vector<std::byte>& frame) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::byte b : frame) {
    const auto v = std::to_integer<unsigned>(b);
    text += kDigits[v >> 4];
    text += kDigits[v & 0xF];
    text += ' ';
  }
  return text;
}

// A number in [0, bound); bound > 0.
inline std::uint64_t below(SplitMix64& rng, std::uint64_t bound) {
  return rng.next() % bound;
}

// `frame` after one to three edits: a bit flipped, a byte overwritten, inserted or deleted.
inline std::vector<std::byte> mutate_frame(std::vector<std::byte> frame, SplitMix64& rng) {
  const auto mutations = 1 + below(rng, 3);
  for (std::uint64_t m = 0; m < mutations; ++m) {
    const auto random_byte = static_cast<std::byte>(rng.next());
    switch (below(rng, 4)) {
      case 0:  // flip one bit
        if (!frame.empty())
          frame[below(rng, frame.size())] ^= static_cast<std::byte>(1u << below(rng, 8));
        break;
      case 1:  // overwrite one byte
        if (!frame.empty()) frame[below(rng, frame.size())] = random_byte;
        break;
      case 2:  // insert one byte
        frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(below(rng, frame.size() + 1)),
                     random_byte);
        break;
      default:  // delete one byte
        if (!frame.empty())
          frame.erase(frame.begin() + static_cast<std::ptrdiff_t>(below(rng, frame.size())));
    }
  }
  return frame;
}

}  // namespace odbatch::test
