#include "odbatch/sim/standard_schedule.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

namespace odbatch {

TEST_CASE("standard batches cut each shard in order, and a short shard idles") {
  // 2 ranks, 6 samples, unequal shards: rank 0 holds 4, rank 1 holds 2.
  const std::vector<std::vector<std::uint32_t>> shards{{5, 0, 3, 1}, {2, 4}};
  // Batch size 2: rank 0 runs {5,0}, {3,1}; rank 1 runs {2,4}, then IDLE.
  const auto s2 = standard_schedule(shards, 2);
  REQUIRE(s2.ranks.size() == 2);
  CHECK(s2.ranks[0] == RankSchedule{{5, 0}, {3, 1}});
  CHECK(s2.ranks[1] == RankSchedule{{2, 4}, {}});
  // Batch size 3: rank 0 runs {5,0,3}, {1}; rank 1 runs {2,4}, then IDLE.
  const auto s3 = standard_schedule(shards, 3);
  CHECK(s3.ranks[0] == RankSchedule{{5, 0, 3}, {1}});
  CHECK(s3.ranks[1] == RankSchedule{{2, 4}, {}});
  CHECK(account_schedule(s3, 6).ok());
  // Batch size 1: four steps, rank 1 idles in the last two.
  const auto s1 = standard_schedule(shards, 1);
  CHECK(s1.ranks[1] == RankSchedule{{2}, {4}, {}, {}});
  CHECK(account_schedule(s1, 6).ok());

  CHECK_THROWS_AS(standard_schedule(shards, 0), std::invalid_argument);
}

}  // namespace odbatch
