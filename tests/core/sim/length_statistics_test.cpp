#include "odbatch/sim/length_statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace odbatch {

TEST_CASE("length statistics of 1..10") {
  const std::vector<std::uint32_t> values{7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  const auto s = summarize_lengths(values, 2);
  CHECK(s.count == 10);
  CHECK(s.sum == 55);
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.mean == doctest::Approx(5.5));
  // Population variance: sum (i - 5.5)^2 / 10 = 82.5 / 10.
  CHECK(s.stddev == doctest::Approx(std::sqrt(8.25)));
  CHECK(s.cv == doctest::Approx(std::sqrt(8.25) / 5.5));
  // Nearest rank: p% of 10 values, rounded up: p1 -> 1st, p25 -> 3rd, p50 -> 5th, p99 -> 10th.
  REQUIRE(s.percentiles.size() == 9);
  CHECK(s.percentiles[0].percent == 1);
  CHECK(s.percentiles[0].value == 1);
  CHECK(s.percentiles[3].percent == 25);
  CHECK(s.percentiles[3].value == 3);
  CHECK(s.percentiles[4].value == 5);
  CHECK(s.percentiles[6].value == 9);
  CHECK(s.percentiles[8].value == 10);
  // Two bins of width ceil(11 / 2) = 6: 0-5 holds 1..5, 6-11 holds 6..10.
  REQUIRE(s.histogram.size() == 2);
  CHECK(s.histogram[0].low == 0);
  CHECK(s.histogram[0].high == 5);
  CHECK(s.histogram[0].count == 5);
  CHECK(s.histogram[1].low == 6);
  CHECK(s.histogram[1].count == 5);
}

TEST_CASE("length statistics of nothing, and of constant lengths") {
  const auto none = summarize_lengths({}, 4);
  CHECK(none.count == 0);
  CHECK(none.percentiles.empty());
  CHECK(none.histogram.empty());

  const std::vector<std::uint32_t> same(5, 0);
  const auto zeros = summarize_lengths(same, 0);  // at least one bin
  CHECK(zeros.cv == 0.0);
  REQUIRE(zeros.histogram.size() == 1);
  CHECK(zeros.histogram[0].count == 5);
}

}  // namespace odbatch
