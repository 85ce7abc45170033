#pragma once
// A histogram of durations with fixed buckets, written by one stage and read by anyone: recording
// is a few relaxed atomic operations, so it can sit on a hot path. Its snapshot estimates
// quantiles from the buckets.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace odbatch {

// The buckets' upper bounds in seconds, 100 us to 60 s: a round over loopback takes well under a
// millisecond, a round that waits for a slow rank seconds. Above the last bound: the +Inf bucket.
inline constexpr std::array<double, 18> kLatencyBucketBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0, 30.0,  60.0};
inline constexpr std::size_t kLatencyBuckets = kLatencyBucketBounds.size() + 1;

struct LatencySnapshot {
  // Observations per bucket, not cumulative: bucket i holds those above bound i - 1 and at most
  // bound i; the last one those above every bound.
  std::array<std::uint64_t, kLatencyBuckets> buckets{};
  std::uint64_t count = 0;  // the sum of the buckets
  double sum_seconds = 0.0;
  double max_seconds = 0.0;

  double mean_seconds() const;
  // The q-quantile (0 < q <= 1) interpolated linearly inside its bucket, as Prometheus's
  // histogram_quantile() does, but never above the largest observation; 0 without observations.
  double quantile(double q) const;
};

class LatencyHistogram {
 public:
  void record(std::chrono::nanoseconds duration);
  LatencySnapshot snapshot() const;

 private:
  std::array<std::atomic<std::uint64_t>, kLatencyBuckets> buckets_{};
  std::atomic<std::uint64_t> sum_ns_{0};
  std::atomic<std::uint64_t> max_ns_{0};
};

}  // namespace odbatch
