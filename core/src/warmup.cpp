#include "odbatch/core/warmup.hpp"

#include <algorithm>

namespace odbatch {

std::uint32_t admission_threshold(const BatchingConfig& config, std::uint64_t round) {
  const std::uint64_t window = config.window;
  std::uint64_t threshold = window;
  switch (config.warmup) {
    case Warmup::none:
      break;
    case Warmup::short_ramp:
      // window/16, /8, /4, /2 for rounds 0..3.
      if (round < 4) threshold = window >> (4 - round);
      break;
    case Warmup::linear:
      // Integer form of the reference's ramp factor 0.05 * round (its float sum drifts).
      if (round < 20) threshold = window * round / 20;
      break;
  }
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(threshold, 1));
}

std::uint32_t ramp_rounds(Warmup warmup) {
  switch (warmup) {
    case Warmup::none:
      return 0;
    case Warmup::short_ramp:
      return 4;
    case Warmup::linear:
      return 20;
  }
  return 0;
}

}  // namespace odbatch
