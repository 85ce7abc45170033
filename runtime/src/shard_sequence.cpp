#include "odbatch/runtime/shard_sequence.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace odbatch {

void ShardSequence::append_ids(std::vector<SampleId> ids) {
  if (ids.empty()) return;
  Piece piece;
  piece.start = size_;
  size_ += ids.size();
  piece.ids = std::move(ids);
  pieces_.push_back(std::move(piece));
}

void ShardSequence::append_range(const EpochShard& shard, std::uint64_t begin, std::uint64_t end) {
  if (begin > end || end > shard.size())
    throw std::out_of_range("shard positions [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") of a shard of " +
                            std::to_string(shard.size()));
  if (begin == end) return;
  Piece piece;
  piece.start = size_;
  piece.shard = shard;
  piece.shard_begin = begin;
  size_ += end - begin;
  pieces_.push_back(std::move(piece));
}

SampleId ShardSequence::operator[](std::uint64_t i) const {
  // Most sequences are one piece; resumed ones a few.
  auto piece = pieces_.begin();
  if (pieces_.size() > 1)
    piece =
        std::prev(std::upper_bound(pieces_.begin(), pieces_.end(), i,
                                   [](std::uint64_t at, const Piece& p) { return at < p.start; }));
  const std::uint64_t offset = i - piece->start;
  return piece->ids.empty() ? piece->shard[piece->shard_begin + offset] : piece->ids[offset];
}

}  // namespace odbatch
