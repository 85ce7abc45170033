#include "odbatch/source/epoch_shard.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kShuffleDomain = 0x65706f6368736864ULL;  // "epochshd"

}  // namespace

EpochShard::EpochShard(std::uint64_t record_count, const ShardSpec& spec)
    : record_count_(record_count), spec_(spec) {
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

  const auto domain_bits =
      static_cast<unsigned>(std::bit_width(record_count == 0 ? 0 : record_count - 1));
  half_bits_ = std::max(1u, (domain_bits + 1) / 2);
  for (int round = 0; round < kFeistelRounds; ++round) {
    round_keys_[round] =
        stable_hash({kShuffleDomain, spec.seed, spec.epoch, static_cast<std::uint64_t>(round)});
  }
}

std::uint64_t EpochShard::position_in_epoch(std::uint64_t i) const {
  return spec_.split == ShardSplit::contiguous ? first_ + i : spec_.rank + i * spec_.world_size;
}

SampleId EpochShard::shuffled(std::uint64_t position) const {
  if (!spec_.shuffle) return position;
  // The Feistel network permutes the whole bit domain; walking the cycle from `position` until
  // it lands in range again restricts it to a permutation of [0, record_count).
  std::uint64_t value = position;
  do {
    value = feistel(value);
  } while (value >= record_count_);
  return value;
}

std::uint64_t EpochShard::feistel(std::uint64_t value) const {
  const std::uint64_t mask = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t left = value >> half_bits_;
  std::uint64_t right = value & mask;
  for (const auto key : round_keys_) {
    const std::uint64_t mixed = left ^ (mix64(right ^ key) & mask);
    left = right;
    right = mixed;
  }
  return (left << half_bits_) | right;
}

}  // namespace odbatch
