#pragma once
// The records an epoch reads when several sources are mixed. Source g holds the ids
// [first_id, first_id + record_count) and is read once every `epochs_per_pass` epochs (K): epoch e
// is chunk k = e % K of cycle c = e / K, the positions [floor(k n / K), floor((k + 1) n / K)) of
// a permutation of the source's n records keyed by (seed, g, c). So each record of the source is
// read exactly once in the K epochs of a cycle, no record twice in an epoch, and the next cycle
// takes other chunks. A source with K = 1 is read whole every epoch, in file order. Without
// shuffling the permutation is the identity: chunk k is the k-th contiguous slice of the source.
// The selection is the sources' chunks concatenated in source order; positions in it are what the
// epoch shard shuffles and splits among ranks. O(1) memory per source.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "odbatch/core/keyed_permutation.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

struct MixedSource {
  SampleId first_id = 0;
  std::uint64_t record_count = 0;
  std::uint64_t epochs_per_pass = 1;
  friend bool operator==(const MixedSource&, const MixedSource&) = default;
};

// The index of the source that holds `id`: the last whose first_id is at most id (0 when there
// are no sources, where every record is source.files').
std::uint32_t source_of(std::span<const MixedSource> sources, SampleId id);

class EpochSelection {
 public:
  // Throws std::invalid_argument when a source's epochs_per_pass is 0.
  EpochSelection(std::span<const MixedSource> sources, std::uint64_t seed, std::uint64_t epoch,
                 bool shuffle);

  std::uint64_t size() const { return size_; }
  // The global sample id at `position` (< size()) of the selection.
  SampleId operator[](std::uint64_t position) const;

 private:
  struct Chunk {
    std::uint64_t start = 0;  // position of the chunk's first id in the selection
    SampleId first_id = 0;    // the source's
    std::uint64_t begin = 0;  // the chunk's first position in the source's permutation
    std::optional<KeyedPermutation> permutation;  // none: the source's records in file order
  };
  std::vector<Chunk> chunks_;  // non-empty ones
  std::uint64_t size_ = 0;
};

}  // namespace odbatch
