#include <doctest/doctest.h>

#include "odbatch/core/warmup.hpp"

using namespace odbatch;

TEST_CASE("warm-up thresholds") {
  BatchingConfig c;
  CHECK(c.warmup == Warmup::short_ramp);  // the default
  c.window = 160;
  c.warmup = Warmup::none;
  CHECK(admission_threshold(c, 0) == 160);
  CHECK(admission_threshold(c, 7) == 160);
  CHECK(ramp_rounds(Warmup::none) == 0);

  c.warmup = Warmup::short_ramp;
  CHECK(admission_threshold(c, 0) == 10);
  CHECK(admission_threshold(c, 1) == 20);
  CHECK(admission_threshold(c, 2) == 40);
  CHECK(admission_threshold(c, 3) == 80);
  CHECK(admission_threshold(c, 4) == 160);
  CHECK(ramp_rounds(Warmup::short_ramp) == 4);

  c.warmup = Warmup::linear;
  CHECK(admission_threshold(c, 0) == 1);
  CHECK(admission_threshold(c, 1) == 8);
  CHECK(admission_threshold(c, 10) == 80);
  CHECK(admission_threshold(c, 19) == 152);
  CHECK(admission_threshold(c, 20) == 160);
  CHECK(admission_threshold(c, 1000) == 160);
  CHECK(ramp_rounds(Warmup::linear) == 20);
}

TEST_CASE("thresholds are at least 1 for tiny windows") {
  BatchingConfig c;
  c.window = 3;
  c.warmup = Warmup::short_ramp;
  CHECK(admission_threshold(c, 0) == 1);
  c.warmup = Warmup::linear;
  CHECK(admission_threshold(c, 1) == 1);
}
