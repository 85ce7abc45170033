#pragma once
// One checkpoint file from every rank's part, through the file system (never through the round
// protocol's collective): each rank writes FILE.part-<rank>; rank 0 waits for every part, joins
// them into FILE and removes them. The ranks must see one file system (a shared one across
// machines).
#include <chrono>
#include <cstdint>
#include <filesystem>

#include "odbatch/core/checkpoint.hpp"

namespace odbatch {

// Every rank calls it with its own Pipeline::state() (world size 1: writes FILE at once). Rank 0
// returns once FILE is whole; throws CheckpointError naming the ranks whose parts did not come
// within `timeout`, or a part that does not join.
void save_checkpoint(const std::filesystem::path& file, const Checkpoint& part,
                     std::chrono::milliseconds timeout);

// The file a rank writes its part to.
std::filesystem::path checkpoint_part_path(const std::filesystem::path& file, std::uint32_t rank);

}  // namespace odbatch
