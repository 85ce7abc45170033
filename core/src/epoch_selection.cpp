#include "odbatch/core/epoch_selection.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

constexpr std::uint64_t kMixDomain = 0x6d69786368756e6bULL;  // "mixchunk"

// floor(k * n / K) without overflow for any n below 2^64.
std::uint64_t chunk_bound(std::uint64_t k, std::uint64_t n, std::uint64_t epochs_per_pass) {
  __extension__ using Wide = unsigned __int128;
  return static_cast<std::uint64_t>(static_cast<Wide>(k) * n / epochs_per_pass);
}

}  // namespace

EpochSelection::EpochSelection(std::span<const MixedSource> sources, std::uint64_t seed,
                               std::uint64_t epoch, bool shuffle) {
  for (std::uint64_t g = 0; g < sources.size(); ++g) {
    const auto& source = sources[g];
    const std::uint64_t epochs = source.epochs_per_pass;
    if (epochs == 0)
      throw std::invalid_argument("source " + std::to_string(g) +
                                  ": epochs_per_pass must be at least 1");
    const std::uint64_t cycle = epoch / epochs, k = epoch % epochs;
    Chunk chunk;
    chunk.start = size_;
    chunk.first_id = source.first_id;
    chunk.begin = chunk_bound(k, source.record_count, epochs);
    const std::uint64_t end = chunk_bound(k + 1, source.record_count, epochs);
    if (chunk.begin == end) continue;
    if (shuffle && epochs > 1)
      chunk.permutation.emplace(source.record_count,
                                std::initializer_list<std::uint64_t>{kMixDomain, seed, g, cycle});
    size_ += end - chunk.begin;
    chunks_.push_back(std::move(chunk));
  }
}

SampleId EpochSelection::operator[](std::uint64_t position) const {
  if (position >= size_)
    throw std::out_of_range("position " + std::to_string(position) + " of a selection of " +
                            std::to_string(size_));
  const auto chunk =
      std::prev(std::upper_bound(chunks_.begin(), chunks_.end(), position,
                                 [](std::uint64_t at, const Chunk& c) { return at < c.start; }));
  const std::uint64_t at = chunk->begin + (position - chunk->start);
  return chunk->first_id + (chunk->permutation ? (*chunk->permutation)(at) : at);
}

std::uint32_t source_of(std::span<const MixedSource> sources, SampleId id) {
  const auto after = std::upper_bound(
      sources.begin(), sources.end(), id,
      [](SampleId value, const MixedSource& source) { return value < source.first_id; });
  return after == sources.begin() ? 0 : static_cast<std::uint32_t>(after - sources.begin() - 1);
}

}  // namespace odbatch
