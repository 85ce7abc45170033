#pragma once
// Summary statistics of observed sample lengths (tokens, labels or patches): what `odbatch stats`
// reports and what a token budget is chosen from.
#include <cstdint>
#include <span>
#include <vector>

namespace odbatch {

struct LengthPercentile {
  std::uint32_t percent = 0;
  std::uint32_t value = 0;
};

struct LengthBin {
  std::uint32_t low = 0;   // inclusive
  std::uint32_t high = 0;  // inclusive
  std::uint64_t count = 0;
};

struct LengthStatistics {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  std::uint32_t min = 0;
  std::uint32_t max = 0;
  double mean = 0.0;
  double stddev = 0.0;                        // population standard deviation
  double cv = 0.0;                            // stddev / mean; 0 when the mean is 0
  std::vector<LengthPercentile> percentiles;  // 1, 5, 10, 25, 50, 75, 90, 95, 99
  std::vector<LengthBin> histogram;           // equal-width bins from 0 to max
};

// Percentiles are nearest-rank: the smallest value with at least p% of the values at or below
// it. The histogram has `bins` bins (at least 1) of width ceil((max + 1) / bins).
LengthStatistics summarize_lengths(std::span<const std::uint32_t> values, std::uint32_t bins);

}  // namespace odbatch
