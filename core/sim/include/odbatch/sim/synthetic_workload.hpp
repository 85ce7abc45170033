#pragma once
// A synthetic epoch: samples whose token lengths are drawn from a seeded length distribution.
#include <cstdint>
#include <variant>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/sim/length_distribution.hpp"

namespace odbatch {

using LengthDistribution = std::variant<LognormalLengths, BimodalLengths>;

// `count` samples with ids 0..count-1 and tokens in [1, max_len]. Labels are half the tokens (at
// least 1), so no sample is rejected for lacking targets; patches are 0 (text-only costs).
std::vector<SampleCost> synthetic_samples(const LengthDistribution& lengths, std::uint64_t count,
                                          std::uint64_t seed, std::uint32_t max_len);

}  // namespace odbatch
