#pragma once
// The warm-up ramp: how many accepted samples round k admits into a rank's window.
#include <cstdint>

#include "odbatch/core/config.hpp"

namespace odbatch {

// Samples admitted by round `round` (at least 1): `none` = window; `short` = window/16, /8, /4,
// /2, then window; `linear` = the reference's 20-round ramp 1, window/20, 2*window/20, ...
std::uint32_t admission_threshold(const BatchingConfig& config, std::uint64_t round);

// Number of rounds before the threshold reaches `window`.
std::uint32_t ramp_rounds(Warmup warmup);

}  // namespace odbatch
