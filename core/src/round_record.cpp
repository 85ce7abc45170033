#include "odbatch/core/round_record.hpp"

namespace odbatch {

RankCheckpoint rank_checkpoint_at(const RoundRecord& round, std::uint64_t steps_taken,
                                  std::uint32_t rank, std::uint64_t shard_size) {
  RankCheckpoint part;
  part.rank = rank;
  part.round = round.round;
  part.round_first_step = round.first_step;
  part.cursor = round.cursor;
  part.shard_size = shard_size;
  part.before_round = round.before;
  part.window = round.window;
  const auto taken_in_round = steps_taken - round.first_step;
  for (std::size_t i = 0; i < part.window.size(); ++i)
    part.window[i].taken = round.emitted_at[i] < taken_in_round;
  return part;
}

}  // namespace odbatch
