#include "odbatch/config/checkpoint_file.hpp"

#include <optional>
#include <thread>

#include "odbatch/core/rank_names.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"

namespace odbatch {

std::filesystem::path checkpoint_part_path(const std::filesystem::path& file, std::uint32_t rank) {
  auto part = file;
  part += ".part-" + std::to_string(rank);
  return part;
}

void save_checkpoint(const std::filesystem::path& file, const Checkpoint& part,
                     std::chrono::milliseconds timeout) {
  if (part.ranks.size() != 1)
    throw CheckpointError("save_checkpoint: a part holds one rank, this one " +
                          std::to_string(part.ranks.size()));
  if (part.world_size == 1) return write_checkpoint_file(file, join_checkpoint_parts({part}));
  const auto rank = part.ranks.front().rank;
  write_checkpoint_file(checkpoint_part_path(file, rank), part);
  if (rank != 0) return;
  // A part left by an earlier, interrupted save is not this one's: it waits to be replaced.
  const auto this_save = [&](const Checkpoint& other) {
    return other.epoch == part.epoch && other.steps_taken == part.steps_taken &&
           other.world_size == part.world_size;
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::optional<Checkpoint>> parts(part.world_size);
  for (;;) {
    std::vector<std::uint32_t> missing;
    for (std::uint32_t r = 0; r < part.world_size; ++r) {
      if (parts[r]) continue;
      const auto path = checkpoint_part_path(file, r);
      if (std::filesystem::exists(path))
        if (auto read = read_checkpoint_file(path); this_save(read)) parts[r] = std::move(read);
      if (!parts[r]) missing.push_back(r);
    }
    if (missing.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline)
      throw CheckpointError(file.string() + ": the checkpoint parts of " + rank_names(missing) +
                            " for step " + std::to_string(part.steps_taken) +
                            " did not come within " + std::to_string(timeout.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<Checkpoint> joined;
  for (auto& one : parts) joined.push_back(std::move(*one));
  write_checkpoint_file(file, join_checkpoint_parts(std::move(joined)));
  for (std::uint32_t r = 0; r < part.world_size; ++r)
    std::filesystem::remove(checkpoint_part_path(file, r));
}

}  // namespace odbatch
