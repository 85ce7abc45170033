#pragma once
// A keyed pseudo-random permutation of [0, size), evaluated one position at a time in O(1)
// memory and identical on every platform and build (no standard-library random engines): a
// Feistel network on the smallest even-width bit domain covering `size`, cycle-walked back into
// range (the domain is under 4x `size`, so under 4 steps on average).
#include <cstdint>
#include <initializer_list>

namespace odbatch {

class KeyedPermutation {
 public:
  // Round r's key is stable_hash of `key`'s values followed by r.
  KeyedPermutation(std::uint64_t size, std::initializer_list<std::uint64_t> key);

  std::uint64_t size() const { return size_; }
  // The value at `position` (< size()).
  std::uint64_t operator()(std::uint64_t position) const;

 private:
  std::uint64_t feistel(std::uint64_t value) const;

  static constexpr int kRounds = 6;

  std::uint64_t size_;
  unsigned half_bits_ = 0;
  std::uint64_t round_keys_[kRounds] = {};
};

}  // namespace odbatch
