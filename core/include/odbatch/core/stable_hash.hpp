#pragma once
// Platform-independent hashing of integers: digests and the step permutation must be identical on
// every rank and every build, so std::hash (implementation-defined) is never used for them.
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace odbatch {

// The SplitMix64 finaliser: a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Order-sensitive streaming hash of 64-bit values.
class StableHasher {
 public:
  constexpr explicit StableHasher(std::uint64_t domain = 0) : state_(mix64(domain)) {}
  constexpr StableHasher& add(std::uint64_t value) {
    state_ = mix64(state_ ^ mix64(value + counter_++));
    return *this;
  }
  constexpr StableHasher& add(std::string_view text) {
    add(text.size());
    for (char c : text) add(static_cast<unsigned char>(c));
    return *this;
  }
  constexpr std::uint64_t digest() const { return mix64(state_ ^ counter_); }

 private:
  std::uint64_t state_;
  std::uint64_t counter_ = 0;
};

constexpr std::uint64_t stable_hash(std::initializer_list<std::uint64_t> values) {
  StableHasher h;
  for (auto v : values) h.add(v);
  return h.digest();
}

// Maps a 64-bit hash to [0, n) by multiply-shift (n > 0).
constexpr std::uint64_t reduce_to_range(std::uint64_t hash, std::uint64_t n) {
  __extension__ using Wide = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<Wide>(hash) * n) >> 64);
}

}  // namespace odbatch
