#include "odbatch/source/epoch_shard.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

constexpr std::uint64_t kShuffleDomain = 0x65706f6368736864ULL;  // "epochshd"

}  // namespace

EpochShard::EpochShard(std::uint64_t record_count, const ShardSpec& spec)
    : record_count_(record_count),
      spec_(spec),
      permutation_(record_count, {kShuffleDomain, spec.seed, spec.epoch}) {
  if (spec.world_size == 0) throw std::invalid_argument("shard world_size must be at least 1");
  if (spec.rank >= spec.world_size) {
    throw std::invalid_argument("shard rank " + std::to_string(spec.rank) +
                                " is not below world_size " + std::to_string(spec.world_size));
  }
  const std::uint64_t world = spec.world_size;
  const std::uint64_t base = record_count / world;
  const std::uint64_t remainder = record_count % world;
  size_ = spec.split == ShardSplit::contiguous
              ? base + (spec.rank < remainder ? 1 : 0)
              : (spec.rank < record_count ? (record_count - spec.rank - 1) / world + 1 : 0);
  first_ = spec.rank * base + std::min<std::uint64_t>(spec.rank, remainder);
}

EpochShard::EpochShard(std::shared_ptr<const EpochSelection> selection, const ShardSpec& spec)
    : EpochShard(selection->size(), spec) {
  selection_ = std::move(selection);
}

SampleId EpochShard::operator[](std::uint64_t i) const {
  const std::uint64_t position = position_in_epoch(i);
  const std::uint64_t shuffled = spec_.shuffle ? permutation_(position) : position;
  return selection_ ? (*selection_)[shuffled] : shuffled;
}

std::uint64_t EpochShard::position_in_epoch(std::uint64_t i) const {
  return spec_.split == ShardSplit::contiguous ? first_ + i : spec_.rank + i * spec_.world_size;
}

}  // namespace odbatch
