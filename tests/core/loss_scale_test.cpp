#include <doctest/doctest.h>

#include "odbatch/core/loss_scale.hpp"

using namespace odbatch;

TEST_CASE("loss scale modes") {
  StepGroup local;
  local.count = 3;
  local.sum_tokens = 300;
  local.sum_labels = 100;
  const StepTotals totals{12, 1200, 800};
  CHECK(loss_scale(LossScaling::none, 4, local, totals) == 1.0);
  CHECK(loss_scale(LossScaling::samples, 4, local, totals) == doctest::Approx(1.0));
  CHECK(loss_scale(LossScaling::tokens, 4, local, totals) == doctest::Approx(1.0));
  CHECK(loss_scale(LossScaling::labels, 4, local, totals) == doctest::Approx(0.5));
}

TEST_CASE("IDLE steps and zero denominators scale to 0") {
  const StepGroup idle;
  CHECK(loss_scale(LossScaling::none, 4, idle, {1, 1, 1}) == 0.0);
  CHECK(loss_scale(LossScaling::labels, 4, idle, {1, 1, 1}) == 0.0);
  StepGroup local;
  local.count = 1;
  local.sum_tokens = 5;
  CHECK(loss_scale(LossScaling::labels, 4, local, {1, 5, 0}) == 0.0);
}
