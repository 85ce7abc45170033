#pragma once
// Fixed-batch training, the baseline of throughput comparisons: every rank cuts its shard, in
// shard order, into batches of `batch_size` samples, padded to the batch's longest sample. A rank
// whose shard runs out runs IDLE steps until the longest shard is done, so no sample is repeated
// or dropped (unlike a DistributedSampler's padding or drop_last).
#include <cstdint>
#include <span>
#include <vector>

#include "odbatch/sim/schedule.hpp"

namespace odbatch {

// `shards[r]` holds rank r's sample indices in shard order; batch_size >= 1.
Schedule standard_schedule(std::span<const std::vector<std::uint32_t>> shards,
                           std::uint32_t batch_size);

}  // namespace odbatch
