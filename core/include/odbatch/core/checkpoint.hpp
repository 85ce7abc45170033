#pragma once
// A loader checkpoint: where every rank stood at a step boundary its trainer reached, in a form
// that restarts the epoch exactly there (with the same world size: the very batches of an
// uninterrupted run from that step on) or spreads what was not yet emitted over another number
// of ranks. Samples are named by id, never stored: a rank's part is its window's ids and ages at
// the start of the round holding the next step, and a few counters.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "odbatch/core/run_settings.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

// Bumped whenever the checkpoint's content or meaning changes.
inline constexpr std::uint32_t kCheckpointVersion = 1;

// Samples and tokens emitted over all ranks (StepInfo's global_*_consumed).
struct GlobalProgress {
  std::uint64_t samples = 0;
  std::uint64_t tokens = 0;
  friend bool operator==(const GlobalProgress&, const GlobalProgress&) = default;
};

// A sample of a rank's window at the start of the checkpoint's round, in window order.
struct CheckpointWindowSample {
  SampleId id = 0;
  std::uint32_t age = 0;  // rounds it was deferred; 0 for a sample the round admitted
  bool taken = false;     // emitted in a step the trainer took before the checkpoint
  friend bool operator==(const CheckpointWindowSample&, const CheckpointWindowSample&) = default;
};

struct RankCheckpoint {
  std::uint32_t rank = 0;
  // The round that planned the last step taken: a resume replays it from the window below and
  // skips its steps up to that one. With no step taken the epoch starts afresh (round 0, empty
  // window, cursor 0).
  std::uint64_t round = 0;
  std::uint64_t round_first_step = 0;  // the round's first step in the epoch
  // Positions of the rank's epoch shard that the admission of rounds up to `round` consumed
  // (accepted or rejected): reading resumes there.
  std::uint64_t cursor = 0;
  std::uint64_t shard_size = 0;
  GlobalProgress before_round;  // at the round's first step
  std::vector<CheckpointWindowSample> window;
  friend bool operator==(const RankCheckpoint&, const RankCheckpoint&) = default;
};

struct Checkpoint {
  std::uint64_t epoch = 0;
  std::uint64_t steps_taken = 0;  // steps of the epoch that every rank's trainer took
  GlobalProgress progress;        // after those steps
  std::uint32_t world_size = 1;
  std::vector<RunSetting> settings;
  // A rank's part holds its own; a joined checkpoint every rank's, in rank order.
  std::vector<RankCheckpoint> ranks;
  // Set when the epoch was itself resumed onto another world size: the checkpoint it was resumed
  // from. Its ranks' pending samples, re-sharded, are this checkpoint's rank sequences, along
  // which cursors and shard sizes count (instead of along epoch shards).
  std::shared_ptr<const Checkpoint> origin;
  // Compares origins by value.
  friend bool operator==(const Checkpoint& a, const Checkpoint& b);
};

// A checkpoint that cannot be used: unreadable, corrupt, incomplete, inconsistent or made for
// another dataset or configuration. The message says which and where.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks one rank's part for itself (rank below world size, counters in order, the cursor within
// the shard); throws CheckpointError naming the rank and the field.
void validate_rank_checkpoint(const Checkpoint& header, const RankCheckpoint& rank);

// Joins the parts the ranks saved (each holding its own rank) into one checkpoint. Throws
// CheckpointError naming a rank that is missing or given twice, or a part that disagrees with
// rank 0's on the epoch, the steps taken, the progress, the world size, a setting or the round.
Checkpoint join_checkpoint_parts(std::vector<Checkpoint> parts);

// The settings in which `current` differs from `saved`, one message each naming the setting and
// both values ("batching.window: 4096 in the checkpoint, 2048 now"); empty when a resume may go
// on.
std::vector<std::string> setting_mismatches(const std::vector<RunSetting>& saved,
                                            const std::vector<RunSetting>& current);

// Re-sharding. An old rank's pending sequence is what it had not emitted: the samples of its
// window not taken, in window order, then the positions [cursor, shard_size) of its sequence (its
// epoch shard, or what an origin gave it).
std::uint64_t pending_samples(const RankCheckpoint& rank);

// Positions [begin, end) of old rank `old_rank`'s pending sequence.
struct PendingSlice {
  std::uint32_t old_rank = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const PendingSlice&, const PendingSlice&) = default;
};

// What new rank `rank` of `world_size` reads for the rest of the epoch: the old ranks' pending
// sequences, concatenated in rank order, split into `world_size` contiguous parts whose sizes
// differ by at most one. Every pending sample goes to exactly one new rank.
std::vector<PendingSlice> reshard_pending(const Checkpoint& checkpoint, std::uint32_t world_size,
                                          std::uint32_t rank);

}  // namespace odbatch
