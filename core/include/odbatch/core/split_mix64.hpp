#pragma once
// A seeded random number generator with a fixed, portable sequence: the same seed gives the same
// draws on every platform and standard library, which std::mt19937's distributions do not.
#include <cstdint>

namespace odbatch {

// SplitMix64 (Steele, Lea and Flood): a small generator that passes BigCrush.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1)
  double normal();   // standard normal (Box-Muller)

 private:
  std::uint64_t state_;
};

}  // namespace odbatch
