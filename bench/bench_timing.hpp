#pragma once
// What the benchmarks time with: a monotonic clock, and the median of repeated measurements
// (robust to the outliers a shared machine gives).
#include <algorithm>
#include <chrono>
#include <vector>

namespace odbatch::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The upper median of a non-empty list.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace odbatch::bench
