#include "odbatch/core/keyed_permutation.hpp"

#include <algorithm>
#include <bit>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {

KeyedPermutation::KeyedPermutation(std::uint64_t size, std::initializer_list<std::uint64_t> key)
    : size_(size) {
  const auto domain_bits = static_cast<unsigned>(std::bit_width(size == 0 ? 0 : size - 1));
  half_bits_ = std::max(1u, (domain_bits + 1) / 2);
  for (int round = 0; round < kRounds; ++round) {
    StableHasher hasher;
    for (const auto value : key) hasher.add(value);
    round_keys_[round] = hasher.add(static_cast<std::uint64_t>(round)).digest();
  }
}

std::uint64_t KeyedPermutation::operator()(std::uint64_t position) const {
  // The Feistel network permutes the whole bit domain; walking the cycle from `position` until
  // it lands in range again restricts it to a permutation of [0, size).
  std::uint64_t value = position;
  do {
    value = feistel(value);
  } while (value >= size_);
  return value;
}

std::uint64_t KeyedPermutation::feistel(std::uint64_t value) const {
  const std::uint64_t mask = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t left = value >> half_bits_;
  std::uint64_t right = value & mask;
  for (const auto key : round_keys_) {
    const std::uint64_t mixed = left ^ (mix64(right ^ key) & mask);
    left = right;
    right = mixed;
  }
  return (left << half_bits_) | right;
}

}  // namespace odbatch
