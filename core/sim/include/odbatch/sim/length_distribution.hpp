#pragma once
// Seeded synthetic sample lengths (lognormal, bimodal) for simulations, tests and benchmarks.
#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/core/split_mix64.hpp"

namespace odbatch {

struct LognormalLengths {
  double mean = 600.0;
  double cv = 0.5;  // standard deviation / mean
};

// With probability `short_weight` a length from `short_mode`, else from `long_mode`.
struct BimodalLengths {
  LognormalLengths short_mode{200.0, 0.3};
  LognormalLengths long_mode{4000.0, 0.3};
  double short_weight = 0.8;
};

std::uint32_t draw_length(const LognormalLengths& d, SplitMix64& rng, std::uint32_t max_len);
std::uint32_t draw_length(const BimodalLengths& d, SplitMix64& rng, std::uint32_t max_len);

}  // namespace odbatch
