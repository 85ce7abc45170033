#pragma once
// Where a rank's epoch starts, as a pure function of a checkpoint: the round it replays or
// begins, the samples that go back into its window and the records it reads after them. Resumed
// onto the checkpoint's world size, a rank reads exactly what it would have read without the
// interruption; onto another, the new ranks read every sample no old rank emitted, each once.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "odbatch/core/checkpoint.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

// Positions [begin, end) of the epoch shard of rank `rank` of `world_size`.
struct EpochShardRange {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const EpochShardRange&, const EpochShardRange&) = default;
};

// A stretch of the records a rank reads: samples a checkpoint names by id, or part of an epoch
// shard.
using SequencePiece = std::variant<std::vector<SampleId>, EpochShardRange>;
using RankSequence = std::vector<SequencePiece>;

std::uint64_t sequence_size(const RankSequence& sequence);

// How many records rank `rank` of `world_size` reads in the epoch (the size of its epoch shard).
using EpochShardSizes = std::function<std::uint64_t(std::uint32_t rank, std::uint32_t world_size)>;

// Where an epoch starts. A fresh epoch: round 0, step 0, its whole shard. A resumed one: its
// sequence begins with `restored_ages.size()` samples that go back into the window of `round`
// with these ages (the round is then replayed, its steps before `steps_taken` not emitted), then
// the rest of the rank's base sequence from `cursor`; onto another world size nothing is
// restored and rounds start afresh at `round` with empty windows. The base sequence is the
// rank's epoch shard or, after a resume onto another world size, what `origin` re-sharded.
struct EpochStart {
  std::uint64_t round = 0;
  std::uint64_t round_first_step = 0;
  std::uint64_t steps_taken = 0;
  GlobalProgress before_round;
  GlobalProgress progress;  // at steps_taken
  std::vector<std::uint32_t> restored_ages;
  // Positions of the base sequence the unrestored part starts at: cursors of later checkpoints
  // count from the base sequence's start.
  std::uint64_t cursor = 0;
  std::uint64_t base_size = 0;
  std::shared_ptr<const Checkpoint> origin;
  // What state() returns while the trainer has taken no batch since the resume (the replayed
  // round may not even be planned yet): the rank's part of the checkpoint resumed from, or, onto
  // another world size, the start of its re-sharded sequence.
  std::optional<Checkpoint> resumed_part;
  // The records the rank reads, in order: the restored samples first.
  RankSequence sequence;
};

// The start of a fresh epoch for rank `rank` of `world_size`: its whole epoch shard.
EpochStart fresh_epoch_start(std::uint32_t rank, std::uint32_t world_size,
                             const EpochShardSizes& shard_sizes);

// Where rank `rank` of `world_size` goes on with the epoch of `checkpoint` (every rank's part,
// joined; its settings already compared). A checkpoint before the epoch's first step starts the
// epoch afresh. Throws CheckpointError when parts are missing or out of rank order, or when a
// rank's records no longer number what the checkpoint says (the dataset changed).
EpochStart plan_resume(const Checkpoint& checkpoint, std::uint32_t rank, std::uint32_t world_size,
                       const EpochShardSizes& shard_sizes);

}  // namespace odbatch
