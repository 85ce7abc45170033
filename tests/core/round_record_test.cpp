// A checkpoint part made from a round's record marks as taken exactly the window samples emitted
// in the steps the trainer took.
#include "odbatch/core/round_record.hpp"

#include <doctest/doctest.h>

namespace odbatch {
namespace {

RoundRecord three_step_round() {
  RoundRecord round;
  round.round = 4;
  round.first_step = 10;
  round.cursor = 37;
  round.before = {120, 9'000};
  round.window = {{5, 2, false}, {8, 0, false}, {9, 0, false}, {11, 0, false}};
  round.steps = 3;
  round.emitted_at = {1, RoundRecord::kDeferred, 0, 2};
  return round;
}

std::vector<bool> taken_of(const RankCheckpoint& part) {
  std::vector<bool> taken;
  for (const auto& sample : part.window) taken.push_back(sample.taken);
  return taken;
}

TEST_CASE("the samples of the steps taken are marked taken, deferred ones never") {
  const auto round = three_step_round();
  CHECK(taken_of(rank_checkpoint_at(round, 11, 2, 50)) ==
        std::vector<bool>{false, false, true, false});
  CHECK(taken_of(rank_checkpoint_at(round, 12, 2, 50)) ==
        std::vector<bool>{true, false, true, false});
  CHECK(taken_of(rank_checkpoint_at(round, 13, 2, 50)) ==
        std::vector<bool>{true, false, true, true});
}

TEST_CASE("the part names the round, its window and the rank's sequence") {
  const auto part = rank_checkpoint_at(three_step_round(), 12, 2, 50);
  CHECK(part.rank == 2);
  CHECK(part.round == 4);
  CHECK(part.round_first_step == 10);
  CHECK(part.cursor == 37);
  CHECK(part.shard_size == 50);
  CHECK(part.before_round == GlobalProgress{120, 9'000});
  CHECK(part.window[0].id == 5);
  CHECK(part.window[0].age == 2);
  CHECK(part.window[3].id == 11);
}

}  // namespace
}  // namespace odbatch
