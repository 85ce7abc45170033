#include "odbatch/core/length_distribution.hpp"

#include <algorithm>
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

std::uint32_t draw_length(const LognormalLengths& d, SplitMix64& rng, std::uint32_t max_len) {
  const double sigma2 = std::log1p(d.cv * d.cv);
  const double mu = std::log(d.mean) - sigma2 / 2.0;
  const double x = std::exp(mu + std::sqrt(sigma2) * rng.normal());
  return static_cast<std::uint32_t>(
      std::clamp(std::llround(x), 1LL, static_cast<long long>(max_len)));
}

std::uint32_t draw_length(const BimodalLengths& d, SplitMix64& rng, std::uint32_t max_len) {
  return rng.uniform() < d.short_weight ? draw_length(d.short_mode, rng, max_len)
                                        : draw_length(d.long_mode, rng, max_len);
}

}  // namespace odbatch
