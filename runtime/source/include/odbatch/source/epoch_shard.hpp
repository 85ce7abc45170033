#pragma once
// The records one rank reads in one epoch, in order: a deterministic shuffle of all global sample
// ids for (seed, epoch), or of the positions of the epoch's selection when sources are mixed
// (epoch_selection.hpp), split among the ranks. Computed on demand in O(1) memory, identical on
// every platform and build (no standard-library random engines or distributions).
#include <cstdint>
#include <memory>

#include "odbatch/core/epoch_selection.hpp"
#include "odbatch/core/keyed_permutation.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

enum class ShardSplit : std::uint8_t {
  contiguous,  // rank r reads the r-th slice of the shuffled order (sizes differ by at most 1)
  strided,     // rank r reads positions r, r + W, r + 2W, ... of the shuffled order
};

struct ShardSpec {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  bool shuffle = true;  // false keeps file order
  ShardSplit split = ShardSplit::contiguous;
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
};

class EpochShard {
 public:
  // Throws std::invalid_argument when world_size is 0 or rank is not below it.
  EpochShard(std::uint64_t record_count, const ShardSpec& spec);
  // Over the positions of `selection` (the epoch's records of mixed sources) instead of all ids.
  EpochShard(std::shared_ptr<const EpochSelection> selection, const ShardSpec& spec);

  // Number of records this rank reads this epoch, known before reading any.
  std::uint64_t size() const { return size_; }

  // The global sample id this rank reads at position `i` (< size()) of its epoch.
  SampleId operator[](std::uint64_t i) const;

 private:
  // Position in the whole epoch's shuffled order of this rank's i-th record.
  std::uint64_t position_in_epoch(std::uint64_t i) const;

  std::uint64_t record_count_;
  ShardSpec spec_;
  std::uint64_t size_ = 0;
  std::uint64_t first_ = 0;                          // contiguous split: this rank's first position
  KeyedPermutation permutation_;                     // the epoch's shuffle of [0, record_count)
  std::shared_ptr<const EpochSelection> selection_;  // none: positions are the ids
};

}  // namespace odbatch
