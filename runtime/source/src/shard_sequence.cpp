#include "odbatch/source/shard_sequence.hpp"

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

void ShardSequence::append_range(const ShardSequence& other, std::uint64_t begin,
                                 std::uint64_t end) {
  if (begin > end || end > other.size())
    throw std::out_of_range("sequence positions [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") of a sequence of " +
                            std::to_string(other.size()));
  for (std::size_t i = 0; i < other.pieces_.size(); ++i) {
    const auto& piece = other.pieces_[i];
    const std::uint64_t piece_end =
        i + 1 < other.pieces_.size() ? other.pieces_[i + 1].start : other.size();
    const std::uint64_t from = std::max(begin, piece.start), to = std::min(end, piece_end);
    if (from >= to) continue;
    if (piece.ids.empty()) {
      const auto at = piece.shard_begin + (from - piece.start);
      append_range(piece.shard, at, at + (to - from));
    } else {
      append_ids(
          std::vector<SampleId>(piece.ids.begin() + static_cast<std::ptrdiff_t>(from - piece.start),
                                piece.ids.begin() + static_cast<std::ptrdiff_t>(to - piece.start)));
    }
  }
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
