#include "odbatch/sim/standard_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace odbatch {

Schedule standard_schedule(std::span<const std::vector<std::uint32_t>> shards,
                           std::uint32_t batch_size) {
  if (batch_size == 0) throw std::invalid_argument("batch size must be at least 1");
  std::size_t steps = 0;
  for (const auto& shard : shards)
    steps = std::max(steps, (shard.size() + batch_size - 1) / batch_size);
  Schedule schedule;
  schedule.ranks.resize(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r) {
    auto& rank = schedule.ranks[r];
    rank.resize(steps);  // IDLE past the shard's last batch
    const auto& shard = shards[r];
    for (std::size_t first = 0; first < shard.size(); first += batch_size) {
      const auto last = std::min(shard.size(), first + batch_size);
      rank[first / batch_size].assign(shard.begin() + static_cast<std::ptrdiff_t>(first),
                                      shard.begin() + static_cast<std::ptrdiff_t>(last));
    }
  }
  return schedule;
}

}  // namespace odbatch
