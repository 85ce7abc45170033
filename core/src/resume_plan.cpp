#include "odbatch/core/resume_plan.hpp"

#include <algorithm>
#include <string>

namespace odbatch {
namespace {

std::uint64_t piece_size(const SequencePiece& piece) {
  if (const auto* ids = std::get_if<std::vector<SampleId>>(&piece)) return ids->size();
  const auto& range = std::get<EpochShardRange>(piece);
  return range.end - range.begin;
}

void append_ids(RankSequence& sequence, std::vector<SampleId> ids) {
  if (!ids.empty()) sequence.push_back(std::move(ids));
}

// Appends positions [begin, end) of `source`.
void append_slice(RankSequence& sequence, const RankSequence& source, std::uint64_t begin,
                  std::uint64_t end) {
  if (begin > end || end > sequence_size(source))
    throw CheckpointError("cannot resume: positions [" + std::to_string(begin) + ", " +
                          std::to_string(end) + ") of a sequence of " +
                          std::to_string(sequence_size(source)) + " records");
  std::uint64_t start = 0;  // of the piece in `source`
  for (const auto& piece : source) {
    const std::uint64_t size = piece_size(piece);
    const std::uint64_t from = std::max(begin, start), to = std::min(end, start + size);
    if (from < to) {
      if (const auto* ids = std::get_if<std::vector<SampleId>>(&piece)) {
        append_ids(sequence,
                   std::vector<SampleId>(ids->begin() + static_cast<std::ptrdiff_t>(from - start),
                                         ids->begin() + static_cast<std::ptrdiff_t>(to - start)));
      } else {
        auto range = std::get<EpochShardRange>(piece);
        range.end = range.begin + (to - start);
        range.begin += from - start;
        sequence.push_back(range);
      }
    }
    start += size;
  }
}

RankSequence whole_shard(std::uint32_t rank, std::uint32_t world_size,
                         const EpochShardSizes& shard_sizes) {
  const std::uint64_t size = shard_sizes(rank, world_size);
  if (size == 0) return {};
  return {EpochShardRange{rank, world_size, 0, size}};
}

// A rank's base sequence: its epoch shard or, in an epoch resumed onto another world size, its
// part of what `origin`'s ranks had not emitted.
RankSequence base_sequence(const Checkpoint* origin, std::uint32_t rank, std::uint32_t world_size,
                           const EpochShardSizes& shard_sizes) {
  if (!origin) return whole_shard(rank, world_size, shard_sizes);
  RankSequence sequence;
  for (const auto& slice : reshard_pending(*origin, world_size, rank)) {
    const auto& old = origin->ranks[slice.old_rank];
    std::vector<SampleId> untaken;
    for (const auto& sample : old.window)
      if (!sample.taken) untaken.push_back(sample.id);
    const std::uint64_t in_window = untaken.size();
    if (slice.begin < in_window)
      append_ids(sequence, std::vector<SampleId>(
                               untaken.begin() + static_cast<std::ptrdiff_t>(slice.begin),
                               untaken.begin() +
                                   static_cast<std::ptrdiff_t>(std::min(slice.end, in_window))));
    if (slice.end > in_window) {
      const auto base =
          base_sequence(origin->origin.get(), old.rank, origin->world_size, shard_sizes);
      if (sequence_size(base) != old.shard_size)
        throw CheckpointError("cannot resume: rank " + std::to_string(old.rank) + " of " +
                              std::to_string(origin->world_size) + " read " +
                              std::to_string(old.shard_size) + " records, now " +
                              std::to_string(sequence_size(base)));
      append_slice(sequence, base, old.cursor + std::max(slice.begin, in_window) - in_window,
                   old.cursor + slice.end - in_window);
    }
  }
  return sequence;
}

void require_complete(const Checkpoint& checkpoint) {
  if (checkpoint.ranks.size() != checkpoint.world_size)
    throw CheckpointError("cannot resume: the checkpoint holds " +
                          std::to_string(checkpoint.ranks.size()) + " of its " +
                          std::to_string(checkpoint.world_size) +
                          " ranks' parts (join every rank's state() first)");
  for (std::uint32_t r = 0; r < checkpoint.world_size; ++r)
    if (checkpoint.ranks[r].rank != r)
      throw CheckpointError("cannot resume: the checkpoint's parts are not in rank order");
}

}  // namespace

std::uint64_t sequence_size(const RankSequence& sequence) {
  std::uint64_t size = 0;
  for (const auto& piece : sequence) size += piece_size(piece);
  return size;
}

EpochStart fresh_epoch_start(std::uint32_t rank, std::uint32_t world_size,
                             const EpochShardSizes& shard_sizes) {
  EpochStart start;
  start.sequence = whole_shard(rank, world_size, shard_sizes);
  start.base_size = sequence_size(start.sequence);
  return start;
}

EpochStart plan_resume(const Checkpoint& checkpoint, std::uint32_t rank, std::uint32_t world_size,
                       const EpochShardSizes& shard_sizes) {
  require_complete(checkpoint);
  if (checkpoint.steps_taken == 0) return fresh_epoch_start(rank, world_size, shard_sizes);
  EpochStart start;
  start.steps_taken = checkpoint.steps_taken;
  start.progress = checkpoint.progress;
  Checkpoint part = checkpoint;
  part.world_size = world_size;
  part.ranks.clear();
  if (checkpoint.world_size == world_size) {
    // The same ranks: replay the round that planned the last step taken, from its window.
    const auto& mine = checkpoint.ranks[rank];
    const auto base = base_sequence(checkpoint.origin.get(), rank, world_size, shard_sizes);
    if (mine.shard_size != sequence_size(base))
      throw CheckpointError("cannot resume: rank " + std::to_string(rank) + " reads " +
                            std::to_string(sequence_size(base)) + " records, the checkpoint's " +
                            std::to_string(mine.shard_size));
    std::vector<SampleId> window;
    for (const auto& sample : mine.window) {
      window.push_back(sample.id);
      start.restored_ages.push_back(sample.age);
    }
    append_ids(start.sequence, std::move(window));
    append_slice(start.sequence, base, mine.cursor, sequence_size(base));
    start.round = mine.round;
    start.round_first_step = mine.round_first_step;
    start.before_round = mine.before_round;
    start.cursor = mine.cursor;
    start.base_size = sequence_size(base);
    start.origin = checkpoint.origin;
    part.ranks.push_back(mine);
  } else {
    // Other ranks: what no old rank emitted, re-sharded; rounds start afresh after the old ones.
    auto origin = std::make_shared<const Checkpoint>(checkpoint);
    start.sequence = base_sequence(origin.get(), rank, world_size, shard_sizes);
    start.round = checkpoint.ranks.front().round + 1;
    start.round_first_step = checkpoint.steps_taken;
    start.before_round = checkpoint.progress;
    start.base_size = sequence_size(start.sequence);
    start.origin = origin;
    // Resumed on these ranks, this part restarts the same re-sharded sequence from its start.
    RankCheckpoint mine;
    mine.rank = rank;
    mine.round = start.round;
    mine.round_first_step = start.round_first_step;
    mine.shard_size = start.base_size;
    mine.before_round = start.before_round;
    part.ranks.push_back(std::move(mine));
    part.origin = std::move(origin);
  }
  start.resumed_part = std::move(part);
  return start;
}

}  // namespace odbatch
