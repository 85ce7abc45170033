#include <doctest/doctest.h>

#include "odbatch/core/screening.hpp"

using namespace odbatch;
using V = Screening::Verdict;

TEST_CASE("screening rejects empty samples and applies the configured policies") {
  BatchingConfig c;
  c.token_budget = 100;
  c.max_seq_len = 200;
  CHECK(screen_sample({1, 0, 0, 0}, c).verdict == V::reject);
  CHECK(screen_sample({1, 0, 0, 0}, c).reason == RejectReason::empty_sample);
  CHECK(screen_sample({1, 50, 10, 0}, c).verdict == V::accept);

  SUBCASE("over-length samples are truncated or rejected") {
    const auto t = screen_sample({1, 250, 10, 0}, c);
    CHECK(t.verdict == V::truncate);
    CHECK(t.truncate_to == 200);
    c.over_length = OverLengthPolicy::reject;
    CHECK(screen_sample({1, 250, 10, 0}, c).reason == RejectReason::over_length);
  }
  SUBCASE("samples without labels are rejected unless kept by policy") {
    CHECK(screen_sample({1, 50, 0, 0}, c).reason == RejectReason::no_labels);
    c.zero_labels = ZeroLabelPolicy::keep;
    CHECK(screen_sample({1, 50, 0, 0}, c).verdict == V::accept);
  }
  SUBCASE("over-budget samples become singletons or are rejected") {
    CHECK(screen_sample({1, 150, 10, 0}, c).verdict == V::accept);
    CHECK(exceeds_budget({1, 150, 10, 0}, c));
    c.over_budget = OverBudgetPolicy::reject;
    CHECK(screen_sample({1, 150, 10, 0}, c).reason == RejectReason::over_budget);
    c.patch_budget = 8;
    CHECK(screen_sample({1, 50, 10, 9}, c).reason == RejectReason::over_budget);
    CHECK(screen_sample({1, 50, 10, 8}, c).verdict == V::accept);
  }
}
