#include <doctest/doctest.h>

#include <cmath>

#include "odbatch/sim/length_distribution.hpp"

using namespace odbatch;

TEST_CASE("lognormal lengths have the requested mean and CV") {
  SplitMix64 rng(42);
  const LognormalLengths d{600.0, 0.5};
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = draw_length(d, rng, 1u << 20);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  const double cv = std::sqrt(sum2 / n - mean * mean) / mean;
  CHECK(mean == doctest::Approx(600.0).epsilon(0.01));
  CHECK(cv == doctest::Approx(0.5).epsilon(0.03));
}
