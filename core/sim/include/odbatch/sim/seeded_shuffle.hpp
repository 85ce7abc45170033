#pragma once
// A Fisher-Yates shuffle driven by SplitMix64, so simulated orders are the same on every platform
// and build (std::shuffle's distributions are implementation-defined).
#include <cstddef>
#include <span>
#include <utility>

#include "odbatch/core/split_mix64.hpp"
#include "odbatch/core/stable_hash.hpp"

namespace odbatch {

template <class T>
void seeded_shuffle(std::span<T> values, SplitMix64& rng) {
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(reduce_to_range(rng.next(), i));
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace odbatch
