#include "odbatch/sim/synthetic_workload.hpp"

#include <algorithm>

namespace odbatch {

std::vector<SampleCost> synthetic_samples(const LengthDistribution& lengths, std::uint64_t count,
                                          std::uint64_t seed, std::uint32_t max_len) {
  SplitMix64 rng(seed);
  std::vector<SampleCost> samples(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    auto& s = samples[i];
    s.id = i;
    s.tokens = std::visit([&](const auto& d) { return draw_length(d, rng, max_len); }, lengths);
    s.labels = std::max(1u, s.tokens / 2);
  }
  return samples;
}

}  // namespace odbatch
