#pragma once
// A planned round as a checkpoint needs it: the rank's window at the round's start and the step
// at which each window sample is emitted. Every batch carries its round's record, so the trainer's
// thread makes its checkpoint from the last batch it took.
#include <cstdint>
#include <vector>

#include "odbatch/core/checkpoint.hpp"

namespace odbatch {

struct RoundRecord {
  static constexpr std::uint32_t kDeferred = 0xFFFFFFFFu;
  std::uint64_t round = 0;
  std::uint64_t first_step = 0;
  std::uint64_t cursor =
      0;  // base-sequence positions the admission of rounds up to this one consumed
  GlobalProgress before;
  std::vector<CheckpointWindowSample> window;  // `taken` unset
  std::uint32_t steps = 0;
  std::vector<std::uint32_t> emitted_at;  // per window sample: step within the round, or kDeferred
};

// Rank `rank`'s part of a checkpoint after the trainer took `steps_taken` steps of the epoch, the
// last of them in `round`; `shard_size` is the size of the rank's base sequence.
RankCheckpoint rank_checkpoint_at(const RoundRecord& round, std::uint64_t steps_taken,
                                  std::uint32_t rank, std::uint64_t shard_size);

}  // namespace odbatch
