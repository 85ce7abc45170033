// The round-latency histogram: which bucket a duration lands in, the snapshot's totals, and the
// quantile estimates (interpolated inside a bucket, capped at the largest observation).
#include <doctest/doctest.h>

#include "odbatch/metrics/metrics_latency_histogram.hpp"

using namespace odbatch;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("durations land in the bucket whose bound is the first at or above them") {
  LatencyHistogram histogram;
  histogram.record(microseconds(100));  // exactly the first bound
  histogram.record(microseconds(101));
  histogram.record(milliseconds(1));
  histogram.record(seconds(61));
  histogram.record(std::chrono::nanoseconds(-5));  // a clock step backwards counts as zero
  const auto s = histogram.snapshot();
  CHECK(s.buckets[0] == 2);
  CHECK(s.buckets[1] == 1);
  CHECK(s.buckets[3] == 1);
  CHECK(s.buckets[kLatencyBuckets - 1] == 1);
  CHECK(s.count == 5);
  CHECK(s.sum_seconds == doctest::Approx(61.001201));
  CHECK(s.max_seconds == 61.0);
}

TEST_CASE("quantiles interpolate inside their bucket and never exceed the maximum") {
  LatencySnapshot s;
  CHECK(s.quantile(0.5) == 0.0);
  s.buckets[6] = 10;  // (5 ms, 10 ms]
  s.buckets[7] = 10;  // (10 ms, 25 ms]
  s.count = 20;
  s.max_seconds = 0.02;
  CHECK(s.quantile(0.25) == doctest::Approx(0.0075));
  CHECK(s.quantile(0.5) == doctest::Approx(0.01));
  CHECK(s.quantile(0.99) == doctest::Approx(0.02));  // 0.0247 interpolated, capped at the max
  s.buckets[kLatencyBuckets - 1] = 1;
  s.count = 21;
  s.max_seconds = 90.0;
  CHECK(s.quantile(1.0) == 90.0);  // in the +Inf bucket: the largest observation
}
