#pragma once
// Which process group of its rank a new one is: the namespace that lets several Pipelines of a
// process (training and evaluation) share one run's store.
#include <cstdint>
#include <string>

namespace odbatch {

// 0 for the first group rank `rank` joins in run `run_id` on the store at `store_address`, then
// 1, 2, ... Each rank counts its own groups, so the Nth group of every rank is the same group:
// like torch.distributed's groups, Pipelines are created in the same order on every rank (a rank
// that does otherwise pairs two differently configured Pipelines, which round 0's settings check
// names).
std::uint64_t next_group_index(const std::string& run_id, std::uint32_t rank,
                               const std::string& store_address);

}  // namespace odbatch
