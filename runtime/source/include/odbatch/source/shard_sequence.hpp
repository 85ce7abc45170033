#pragma once
// The records one rank reads in one epoch, in order, as a concatenation of pieces: a plain epoch
// reads its epoch shard whole; a resumed one first the samples a checkpoint names by id, then the
// rest of its shard, or, onto another world size, slices of the old ranks' unread records.
#include <cstdint>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/source/epoch_shard.hpp"

namespace odbatch {

class ShardSequence {
 public:
  ShardSequence() = default;
  explicit ShardSequence(const EpochShard& shard) { append_range(shard, 0, shard.size()); }

  void append_ids(std::vector<SampleId> ids);
  // Positions [begin, end) of `shard` or of another sequence; throw std::out_of_range past its end.
  void append_range(const EpochShard& shard, std::uint64_t begin, std::uint64_t end);
  void append_range(const ShardSequence& other, std::uint64_t begin, std::uint64_t end);

  std::uint64_t size() const { return size_; }
  // The id at position `i` (< size()).
  SampleId operator[](std::uint64_t i) const;

 private:
  struct Piece {
    std::uint64_t start = 0;  // position of the piece's first record in the sequence
    std::vector<SampleId> ids;
    EpochShard shard{0, ShardSpec{}};
    std::uint64_t shard_begin = 0;  // for a range of `shard` (ids empty)
  };
  std::vector<Piece> pieces_;
  std::uint64_t size_ = 0;
};

}  // namespace odbatch
