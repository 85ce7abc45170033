#include "odbatch/sim/synthetic_workload.hpp"

#include <doctest/doctest.h>

#include <cmath>

namespace odbatch {

TEST_CASE("synthetic samples: ids in order, lengths within bounds, repeatable by seed") {
  const auto samples = synthetic_samples(LognormalLengths{800, 0.5}, 20000, 9, 3000);
  REQUIRE(samples.size() == 20000);
  double sum = 0, squares = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    CHECK(s.id == i);
    CHECK(s.tokens >= 1);
    CHECK(s.tokens <= 3000);
    CHECK(s.labels == std::max(1u, s.tokens / 2));
    CHECK(s.patches == 0);
    sum += s.tokens;
    squares += static_cast<double>(s.tokens) * s.tokens;
  }
  const double mean = sum / 20000, cv = std::sqrt(squares / 20000 - mean * mean) / mean;
  CHECK(mean == doctest::Approx(800).epsilon(0.02));
  CHECK(cv == doctest::Approx(0.5).epsilon(0.05));
  CHECK(synthetic_samples(LognormalLengths{800, 0.5}, 20000, 9, 3000) == samples);
  CHECK(synthetic_samples(LognormalLengths{800, 0.5}, 20000, 10, 3000) != samples);
  CHECK(synthetic_samples(BimodalLengths{}, 5, 1, 100).size() == 5);
}

}  // namespace odbatch
