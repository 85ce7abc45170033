#include "odbatch/sim/length_statistics.hpp"

#include <algorithm>
#include <cmath>

namespace odbatch {
namespace {

constexpr std::uint32_t kPercents[] = {1, 5, 10, 25, 50, 75, 90, 95, 99};

}  // namespace

LengthStatistics summarize_lengths(std::span<const std::uint32_t> values, std::uint32_t bins) {
  LengthStatistics s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<std::uint32_t> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  double squares = 0.0;
  for (auto v : sorted) s.sum += v;
  s.mean = static_cast<double>(s.sum) / static_cast<double>(s.count);
  for (auto v : sorted) squares += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(squares / static_cast<double>(s.count));
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;

  for (auto percent : kPercents) {
    // Nearest rank: ceil(p / 100 * n), computed in integers.
    const std::uint64_t rank = (std::uint64_t{percent} * s.count + 99) / 100;
    s.percentiles.push_back({percent, sorted[std::max<std::uint64_t>(rank, 1) - 1]});
  }

  bins = std::max(bins, 1u);
  const std::uint64_t width = (std::uint64_t{s.max} + bins) / bins;  // ceil((max + 1) / bins)
  s.histogram.resize(bins);
  for (std::uint32_t b = 0; b < bins; ++b) {
    s.histogram[b].low = static_cast<std::uint32_t>(width * b);
    s.histogram[b].high = static_cast<std::uint32_t>(width * (b + 1) - 1);
  }
  for (auto v : sorted) ++s.histogram[static_cast<std::size_t>(v / width)].count;
  return s;
}

}  // namespace odbatch
