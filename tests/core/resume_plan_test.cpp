// Resume planning: onto the checkpoint's world size a rank reads its window again and then its
// sequence from the cursor on; onto another world size the new ranks together read every sample
// no old rank emitted exactly once, also when the epoch was itself resumed onto another size.
#include "odbatch/core/resume_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace odbatch {
namespace {

constexpr std::uint64_t kRecords = 103;

// The tests' epoch shards: rank r of W reads a contiguous slice of the records, each record's id
// being its position in the whole epoch.
std::uint64_t shard_first(std::uint32_t rank, std::uint32_t world) {
  const std::uint64_t base = kRecords / world, remainder = kRecords % world;
  return rank * base + std::min<std::uint64_t>(rank, remainder);
}

std::uint64_t shard_size(std::uint32_t rank, std::uint32_t world) {
  return kRecords / world + (rank < kRecords % world ? 1 : 0);
}

const EpochShardSizes kShardSizes = shard_size;

std::vector<SampleId> shard_ids(std::uint32_t rank, std::uint32_t world) {
  std::vector<SampleId> ids;
  for (std::uint64_t p = 0; p < shard_size(rank, world); ++p)
    ids.push_back(shard_first(rank, world) + p);
  return ids;
}

std::vector<SampleId> ids_of(const RankSequence& sequence) {
  std::vector<SampleId> ids;
  for (const auto& piece : sequence) {
    if (const auto* named = std::get_if<std::vector<SampleId>>(&piece)) {
      ids.insert(ids.end(), named->begin(), named->end());
    } else {
      const auto& range = std::get<EpochShardRange>(piece);
      REQUIRE(range.end <= shard_size(range.rank, range.world_size));
      for (auto p = range.begin; p < range.end; ++p)
        ids.push_back(shard_first(range.rank, range.world_size) + p);
    }
  }
  return ids;
}

// A rank stopped part way through its sequence `read`: its cursor, and a window of the `window`
// samples before it, of which every third was emitted already; the oldest two were deferred.
RankCheckpoint stopped_at(std::uint32_t rank, const std::vector<SampleId>& read,
                          std::uint64_t cursor, std::uint64_t window) {
  RankCheckpoint part;
  part.rank = rank;
  part.round = 6;
  part.round_first_step = 20;
  part.cursor = cursor;
  part.shard_size = read.size();
  part.before_round = {300, 60'000};
  for (auto p = cursor - window; p < cursor; ++p) {
    const auto k = p - (cursor - window);
    part.window.push_back({read[p], k < 2 ? 1u : 0u, k % 3 == 0});
  }
  return part;
}

// Every rank of `world` stopped in its sequence (as `sequence_of` gives it).
Checkpoint checkpoint_of(std::uint32_t world, std::shared_ptr<const Checkpoint> origin,
                         const std::function<std::vector<SampleId>(std::uint32_t)>& sequence_of) {
  Checkpoint checkpoint;
  checkpoint.epoch = 3;
  checkpoint.steps_taken = 24;
  checkpoint.progress = {320, 64'000};
  checkpoint.world_size = world;
  checkpoint.origin = std::move(origin);
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto read = sequence_of(r);
    const std::uint64_t cursor = std::min<std::uint64_t>(read.size(), 4 + 3 * r);
    checkpoint.ranks.push_back(stopped_at(r, read, cursor, std::min<std::uint64_t>(cursor, 5)));
  }
  return checkpoint;
}

// What the checkpoint's ranks had not emitted: windows' untaken samples, then unread records.
std::multiset<SampleId> pending_of(
    const Checkpoint& checkpoint,
    const std::function<std::vector<SampleId>(std::uint32_t)>& sequence_of) {
  std::multiset<SampleId> pending;
  for (const auto& rank : checkpoint.ranks) {
    for (const auto& sample : rank.window)
      if (!sample.taken) pending.insert(sample.id);
    const auto read = sequence_of(rank.rank);
    pending.insert(read.begin() + static_cast<std::ptrdiff_t>(rank.cursor), read.end());
  }
  return pending;
}

void check_same_world(const Checkpoint& checkpoint,
                      const std::function<std::vector<SampleId>(std::uint32_t)>& sequence_of) {
  for (std::uint32_t r = 0; r < checkpoint.world_size; ++r) {
    CAPTURE(r);
    const auto& mine = checkpoint.ranks[r];
    const auto start = plan_resume(checkpoint, r, checkpoint.world_size, kShardSizes);
    std::vector<SampleId> expected;
    std::vector<std::uint32_t> ages;
    for (const auto& sample : mine.window) {
      expected.push_back(sample.id);
      ages.push_back(sample.age);
    }
    const auto read = sequence_of(r);
    expected.insert(expected.end(), read.begin() + static_cast<std::ptrdiff_t>(mine.cursor),
                    read.end());
    CHECK(ids_of(start.sequence) == expected);
    CHECK(start.restored_ages == ages);
    CHECK(start.round == mine.round);
    CHECK(start.round_first_step == mine.round_first_step);
    CHECK(start.cursor == mine.cursor);
    CHECK(start.base_size == read.size());
    CHECK(start.steps_taken == checkpoint.steps_taken);
    CHECK(start.progress == checkpoint.progress);
    CHECK(start.before_round == mine.before_round);
    CHECK(start.origin == checkpoint.origin);
    REQUIRE(start.resumed_part);
    REQUIRE(start.resumed_part->ranks.size() == 1);
    CHECK(start.resumed_part->ranks.front() == mine);
  }
}

// Resumes `checkpoint` onto `world` ranks and checks that they read its pending samples, each
// once; returns each new rank's sequence.
std::vector<std::vector<SampleId>> check_other_world(
    const Checkpoint& checkpoint, std::uint32_t world,
    const std::function<std::vector<SampleId>(std::uint32_t)>& sequence_of) {
  std::vector<std::vector<SampleId>> sequences;
  std::multiset<SampleId> read_by_new_ranks;
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto start = plan_resume(checkpoint, r, world, kShardSizes);
    CHECK(start.restored_ages.empty());
    CHECK(start.round == checkpoint.ranks.front().round + 1);
    CHECK(start.round_first_step == checkpoint.steps_taken);
    CHECK(start.before_round == checkpoint.progress);
    CHECK(start.cursor == 0);
    REQUIRE(start.origin);
    CHECK(*start.origin == checkpoint);
    sequences.push_back(ids_of(start.sequence));
    CHECK(start.base_size == sequences.back().size());
    read_by_new_ranks.insert(sequences.back().begin(), sequences.back().end());
  }
  CHECK(read_by_new_ranks == pending_of(checkpoint, sequence_of));
  for (const auto& id : read_by_new_ranks) CHECK(read_by_new_ranks.count(id) == 1);
  return sequences;
}

TEST_CASE("the checkpoint's world size reads each rank's window again, then its shard on") {
  for (std::uint32_t world : {1u, 2u, 3u, 5u}) {
    CAPTURE(world);
    const auto shard = [world](std::uint32_t r) { return shard_ids(r, world); };
    check_same_world(checkpoint_of(world, nullptr, shard), shard);
  }
}

TEST_CASE("another world size reads every sample no old rank emitted exactly once") {
  for (std::uint32_t old_world : {1u, 2u, 3u, 4u})
    for (std::uint32_t new_world : {1u, 2u, 3u, 5u, 8u}) {
      if (new_world == old_world) continue;
      CAPTURE(old_world);
      CAPTURE(new_world);
      const auto shard = [old_world](std::uint32_t r) { return shard_ids(r, old_world); };
      check_other_world(checkpoint_of(old_world, nullptr, shard), new_world, shard);
    }
}

TEST_CASE("an epoch resumed onto another world size resumes again, onto any world size") {
  const std::uint32_t first_world = 3, second_world = 2;
  const auto shard = [](std::uint32_t r) { return shard_ids(r, first_world); };
  const auto first = checkpoint_of(first_world, nullptr, shard);
  const auto resharded = check_other_world(first, second_world, shard);
  const auto resharded_of = [&](std::uint32_t r) { return resharded[r]; };
  const auto second = checkpoint_of(
      second_world, plan_resume(first, 0, second_world, kShardSizes).origin, resharded_of);
  check_same_world(second, resharded_of);
  for (std::uint32_t third_world : {1u, 3u, 4u}) {
    CAPTURE(third_world);
    check_other_world(second, third_world, resharded_of);
  }
}

TEST_CASE("a checkpoint before the epoch's first step starts it afresh") {
  const auto shard = [](std::uint32_t r) { return shard_ids(r, 2); };
  auto checkpoint = checkpoint_of(2, nullptr, shard);
  checkpoint.steps_taken = 0;
  const auto start = plan_resume(checkpoint, 1, 3, kShardSizes);
  CHECK(ids_of(start.sequence) == ids_of(fresh_epoch_start(1, 3, kShardSizes).sequence));
  CHECK(start.round == 0);
  CHECK(start.steps_taken == 0);
  CHECK(start.base_size == shard_size(1, 3));
  CHECK_FALSE(start.resumed_part);
}

TEST_CASE("an incomplete checkpoint or a changed dataset is refused") {
  const auto shard = [](std::uint32_t r) { return shard_ids(r, 2); };
  auto checkpoint = checkpoint_of(2, nullptr, shard);
  auto missing = checkpoint;
  missing.ranks.pop_back();
  CHECK_THROWS_WITH_AS(plan_resume(missing, 0, 2, kShardSizes),
                       "cannot resume: the checkpoint holds 1 of its 2 ranks' parts (join every "
                       "rank's state() first)",
                       CheckpointError);
  auto swapped = checkpoint;
  std::swap(swapped.ranks[0], swapped.ranks[1]);
  CHECK_THROWS_WITH_AS(plan_resume(swapped, 0, 2, kShardSizes),
                       "cannot resume: the checkpoint's parts are not in rank order",
                       CheckpointError);
  auto grown = checkpoint;
  grown.ranks[1].shard_size += 1;
  CHECK_THROWS_WITH_AS(plan_resume(grown, 1, 2, kShardSizes),
                       "cannot resume: rank 1 reads 51 records, the checkpoint's 52",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(plan_resume(grown, 2, 3, kShardSizes),
                       "cannot resume: rank 1 of 2 read 52 records, now 51", CheckpointError);
}

}  // namespace
}  // namespace odbatch
