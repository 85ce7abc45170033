#include "odbatch/core/split_mix64.hpp"

#include <cmath>
#include <numbers>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {

std::uint64_t SplitMix64::next() {
  const std::uint64_t x = state_;
  state_ += 0x9E3779B97F4A7C15ULL;
  return mix64(x);
}

double SplitMix64::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double SplitMix64::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace odbatch
