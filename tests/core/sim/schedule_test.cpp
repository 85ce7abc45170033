#include "odbatch/sim/schedule.hpp"

#include <doctest/doctest.h>

namespace odbatch {

TEST_CASE("schedule accounting: every sample once, equal steps") {
  // Two ranks, five samples: rank 1 ends on an IDLE step.
  const Schedule good{{{{0, 1}, {2}}, {{3, 4}, {}}}};
  const auto a = account_schedule(good, 5);
  CHECK(a.ok());
  CHECK(a.emitted == 5);
  CHECK(a.lost() == 0);
  CHECK(a.steps == 2);

  const auto missing = account_schedule(good, 6);
  CHECK_FALSE(missing.ok());
  CHECK(missing.lost() == 1);

  const Schedule repeated{{{{0, 1}, {2}}, {{3, 4}, {1}}}};
  const auto r = account_schedule(repeated, 5);
  CHECK_FALSE(r.ok());
  CHECK(r.duplicated == 1);
  CHECK(r.emitted == 5);

  const Schedule outside{{{{0, 1}, {2}}, {{3, 4}, {7}}}};
  CHECK(account_schedule(outside, 5).unknown == 1);
  CHECK_FALSE(account_schedule(outside, 5).ok());

  const Schedule uneven{{{{0, 1}, {2}}, {{3, 4}}}};
  const auto u = account_schedule(uneven, 5);
  CHECK_FALSE(u.steps_equal);
  CHECK(u.steps == 2);
  CHECK_FALSE(u.ok());
}

}  // namespace odbatch
