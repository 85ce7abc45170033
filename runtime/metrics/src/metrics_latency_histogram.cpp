#include "odbatch/metrics/metrics_latency_histogram.hpp"

#include <algorithm>

namespace odbatch {
namespace {

// The bounds in whole nanoseconds, so that recording compares integers.
constexpr std::array<std::uint64_t, kLatencyBucketBounds.size()> bounds_ns() {
  std::array<std::uint64_t, kLatencyBucketBounds.size()> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i)
    ns[i] = static_cast<std::uint64_t>(kLatencyBucketBounds[i] * 1e9 + 0.5);
  return ns;
}
constexpr auto kBoundsNs = bounds_ns();

}  // namespace

double LatencySnapshot::mean_seconds() const {
  return count ? sum_seconds / static_cast<double>(count) : 0.0;
}

double LatencySnapshot::quantile(double q) const {
  if (count == 0) return 0.0;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < kLatencyBucketBounds.size(); ++i) {
    const std::uint64_t through = below + buckets[i];
    if (buckets[i] > 0 && static_cast<double>(through) >= rank) {
      const double lower = i == 0 ? 0.0 : kLatencyBucketBounds[i - 1];
      const double upper = kLatencyBucketBounds[i];
      const double share = (rank - static_cast<double>(below)) / static_cast<double>(buckets[i]);
      return std::min(lower + (upper - lower) * share, max_seconds);
    }
    below = through;
  }
  // In the +Inf bucket: its only known point is the largest observation.
  return max_seconds;
}

void LatencyHistogram::record(std::chrono::nanoseconds duration) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(duration.count(), 0));
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), ns) - kBoundsNs.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
  std::uint64_t seen = max_ns_.load(std::memory_order_relaxed);
  while (ns > seen && !max_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

LatencySnapshot LatencyHistogram::snapshot() const {
  LatencySnapshot s;
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) {
    s.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    s.count += s.buckets[i];
  }
  s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  s.max_seconds = static_cast<double>(max_ns_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

}  // namespace odbatch
