#include "odbatch/source/epoch_shard.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace odbatch {
namespace {

std::vector<SampleId> ids_of(const EpochShard& shard) {
  std::vector<SampleId> ids;
  for (std::uint64_t i = 0; i < shard.size(); ++i) ids.push_back(shard[i]);
  return ids;
}

std::vector<SampleId> whole_epoch(std::uint64_t records, std::uint64_t seed, std::uint64_t epoch) {
  return ids_of(EpochShard(records, {seed, epoch, true, ShardSplit::contiguous, 0, 1}));
}

bool is_permutation_of_all(std::vector<SampleId> ids, std::uint64_t records) {
  std::sort(ids.begin(), ids.end());
  std::vector<SampleId> all(records);
  std::iota(all.begin(), all.end(), SampleId{0});
  return ids == all;
}

}  // namespace

TEST_CASE("every record is in exactly one rank's shard, shard sizes differ by at most 1") {
  for (const std::uint64_t records : {0ULL, 1ULL, 2ULL, 5ULL, 8ULL, 9ULL, 10ULL, 100ULL, 1001ULL}) {
    for (const auto split : {ShardSplit::contiguous, ShardSplit::strided}) {
      for (const bool shuffle : {false, true}) {
        for (std::uint32_t world = 1; world <= 9; ++world) {
          CAPTURE(records);
          CAPTURE(static_cast<int>(split));
          CAPTURE(shuffle);
          CAPTURE(world);
          std::vector<SampleId> all;
          std::uint64_t smallest = records;
          std::uint64_t largest = 0;
          for (std::uint32_t rank = 0; rank < world; ++rank) {
            const EpochShard shard(records, {7, 3, shuffle, split, rank, world});
            const auto ids = ids_of(shard);
            all.insert(all.end(), ids.begin(), ids.end());
            smallest = std::min(smallest, shard.size());
            largest = std::max(largest, shard.size());
          }
          CHECK(is_permutation_of_all(all, records));
          CHECK(largest - smallest <= 1);
        }
      }
    }
  }
}

TEST_CASE("without shuffling, contiguous shards are slices and strided shards every W-th id") {
  const EpochShard first(10, {1, 0, false, ShardSplit::contiguous, 0, 3});
  const EpochShard last(10, {1, 0, false, ShardSplit::contiguous, 2, 3});
  CHECK(ids_of(first) == std::vector<SampleId>{0, 1, 2, 3});
  CHECK(ids_of(last) == std::vector<SampleId>{7, 8, 9});
  const EpochShard strided(10, {1, 0, false, ShardSplit::strided, 1, 3});
  CHECK(ids_of(strided) == std::vector<SampleId>{1, 4, 7});
  const EpochShard beyond(2, {1, 0, false, ShardSplit::strided, 2, 3});
  CHECK(beyond.size() == 0);
}

TEST_CASE("the shuffle is a permutation, fixed by (seed, epoch), different across epochs") {
  for (const std::uint64_t records : {1ULL, 2ULL, 3ULL, 64ULL, 65ULL, 1000ULL, 100003ULL}) {
    CAPTURE(records);
    const auto epoch0 = whole_epoch(records, 11, 0);
    CHECK(is_permutation_of_all(epoch0, records));
    CHECK(whole_epoch(records, 11, 0) == epoch0);
    if (records >= 64) {
      std::vector<SampleId> identity(records);
      std::iota(identity.begin(), identity.end(), SampleId{0});
      CHECK(epoch0 != identity);
      CHECK(whole_epoch(records, 11, 1) != epoch0);
      CHECK(whole_epoch(records, 12, 0) != epoch0);
    }
  }
}

TEST_CASE("pinned permutation: the epoch order must never change silently") {
  // Resumed runs and other ranks rely on these exact orders.
  CHECK(whole_epoch(10, 42, 0) == std::vector<SampleId>{7, 9, 6, 1, 8, 4, 0, 3, 2, 5});
  CHECK(whole_epoch(10, 42, 1) == std::vector<SampleId>{4, 7, 6, 9, 5, 2, 8, 1, 0, 3});
  const EpochShard rank1(10, {42, 0, true, ShardSplit::strided, 1, 4});
  CHECK(ids_of(rank1) == std::vector<SampleId>{9, 4, 5});
}

TEST_CASE("every record is equally likely at every position") {
  // Over 8000 epochs each (position, record) pair of an 8-record dataset is expected 1000 times;
  // a weak mixer would leave some pairs far from that.
  constexpr std::uint64_t kRecords = 8;
  constexpr std::uint64_t kEpochs = 8000;
  std::vector<std::uint64_t> counts(kRecords * kRecords, 0);
  for (std::uint64_t epoch = 0; epoch < kEpochs; ++epoch) {
    const auto order = whole_epoch(kRecords, 5, epoch);
    for (std::uint64_t position = 0; position < kRecords; ++position) {
      ++counts[position * kRecords + order[position]];
    }
  }
  const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
  CHECK(*low > 850);
  CHECK(*high < 1150);
}

TEST_CASE("a rank outside the world is an error") {
  CHECK_THROWS_WITH_AS(EpochShard(10, {0, 0, true, ShardSplit::contiguous, 3, 3}),
                       "shard rank 3 is not below world_size 3", std::invalid_argument);
  CHECK_THROWS_WITH_AS(EpochShard(10, {0, 0, true, ShardSplit::contiguous, 0, 0}),
                       "shard world_size must be at least 1", std::invalid_argument);
}

}  // namespace odbatch
