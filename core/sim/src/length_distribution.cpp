#include "odbatch/sim/length_distribution.hpp"

#include <algorithm>
#include <cmath>

namespace odbatch {

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
