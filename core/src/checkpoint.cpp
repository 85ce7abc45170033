#include "odbatch/core/checkpoint.hpp"

#include <algorithm>
#include <map>

namespace odbatch {
namespace {

std::string rank_name(std::uint32_t rank) {
  return "rank " + std::to_string(rank);
}

void require(bool condition, const std::string& message) {
  if (!condition) throw CheckpointError(message);
}

}  // namespace

bool operator==(const Checkpoint& a, const Checkpoint& b) {
  const bool same_origin = a.origin == b.origin || (a.origin && b.origin && *a.origin == *b.origin);
  return a.epoch == b.epoch && a.steps_taken == b.steps_taken && a.progress == b.progress &&
         a.world_size == b.world_size && a.settings == b.settings && a.ranks == b.ranks &&
         same_origin;
}

void validate_rank_checkpoint(const Checkpoint& header, const RankCheckpoint& rank) {
  const std::string who = "checkpoint of " + rank_name(rank.rank);
  require(header.world_size > 0, "checkpoint: world size 0");
  require(rank.rank < header.world_size,
          who + ": rank not below the world size " + std::to_string(header.world_size));
  require(rank.cursor <= rank.shard_size, who + ": cursor " + std::to_string(rank.cursor) +
                                              " past the shard's " +
                                              std::to_string(rank.shard_size) + " records");
  require(rank.round_first_step <= header.steps_taken,
          who + ": round " + std::to_string(rank.round) + " starts at step " +
              std::to_string(rank.round_first_step) + ", after the " +
              std::to_string(header.steps_taken) + " steps taken");
  require(rank.before_round.samples <= header.progress.samples &&
              rank.before_round.tokens <= header.progress.tokens,
          who + ": progress before the round exceeds the progress at the checkpoint");
  // Deferred samples come first in a window, then those the round admitted (age 0).
  bool admitted_seen = false;
  for (const auto& sample : rank.window) {
    if (sample.age == 0) admitted_seen = true;
    require(!(admitted_seen && sample.age > 0), who + ": window sample " +
                                                    std::to_string(sample.id) +
                                                    " deferred after samples the round admitted");
  }
}

Checkpoint join_checkpoint_parts(std::vector<Checkpoint> parts) {
  require(!parts.empty(), "checkpoint: no parts to join");
  const Checkpoint& first = parts.front();
  Checkpoint joined;
  joined.epoch = first.epoch;
  joined.steps_taken = first.steps_taken;
  joined.progress = first.progress;
  joined.world_size = first.world_size;
  joined.settings = first.settings;
  joined.origin = first.origin;
  std::map<std::uint32_t, RankCheckpoint> by_rank;
  for (auto& part : parts) {
    for (auto& rank : part.ranks) {
      const std::string who = "checkpoint part of " + rank_name(rank.rank);
      require(part.epoch == joined.epoch && part.steps_taken == joined.steps_taken,
              who + ": epoch " + std::to_string(part.epoch) + " step " +
                  std::to_string(part.steps_taken) + ", another part: epoch " +
                  std::to_string(joined.epoch) + " step " + std::to_string(joined.steps_taken));
      require(part.world_size == joined.world_size,
              who + ": world size " + std::to_string(part.world_size) +
                  ", another part: " + std::to_string(joined.world_size));
      require(part.progress == joined.progress,
              who + ": global progress differs from another part's");
      require(part.settings == joined.settings, who + ": settings differ from another part's");
      require(part.origin == joined.origin ||
                  (part.origin && joined.origin && *part.origin == *joined.origin),
              who + ": resumed from another checkpoint than another part");
      validate_rank_checkpoint(part, rank);
      if (!by_rank.empty()) {
        const auto& other = by_rank.begin()->second;
        require(rank.round == other.round && rank.round_first_step == other.round_first_step,
                who + ": round " + std::to_string(rank.round) + " from step " +
                    std::to_string(rank.round_first_step) + ", " + rank_name(other.rank) +
                    ": round " + std::to_string(other.round) + " from step " +
                    std::to_string(other.round_first_step));
      }
      const auto number = rank.rank;
      require(by_rank.emplace(number, std::move(rank)).second, who + ": given twice");
    }
  }
  for (std::uint32_t rank = 0; rank < joined.world_size; ++rank)
    require(by_rank.contains(rank), "checkpoint: the part of " + rank_name(rank) + " of " +
                                        std::to_string(joined.world_size) + " is missing");
  for (auto& [number, rank] : by_rank) joined.ranks.push_back(std::move(rank));
  return joined;
}

std::vector<std::string> setting_mismatches(const std::vector<RunSetting>& saved,
                                            const std::vector<RunSetting>& current) {
  std::map<std::string, std::string> now;
  for (const auto& setting : current) now[setting.name] = setting.value;
  std::vector<std::string> mismatches;
  for (const auto& setting : saved) {
    const auto found = now.find(setting.name);
    if (found == now.end()) {
      mismatches.push_back(setting.name + ": " + setting.value + " in the checkpoint, unknown now");
    } else if (found->second != setting.value) {
      mismatches.push_back(setting.name + ": " + setting.value + " in the checkpoint, " +
                           found->second + " now");
    }
    now.erase(setting.name);
  }
  for (const auto& [name, value] : now)
    mismatches.push_back(name + ": not in the checkpoint, " + value + " now");
  return mismatches;
}

std::uint64_t pending_samples(const RankCheckpoint& rank) {
  const auto untaken = static_cast<std::uint64_t>(
      std::count_if(rank.window.begin(), rank.window.end(),
                    [](const CheckpointWindowSample& sample) { return !sample.taken; }));
  return untaken + (rank.shard_size - rank.cursor);
}

std::vector<PendingSlice> reshard_pending(const Checkpoint& checkpoint, std::uint32_t world_size,
                                          std::uint32_t rank) {
  require(world_size > 0 && rank < world_size,
          "re-sharding: rank " + std::to_string(rank) + " of " + std::to_string(world_size));
  std::uint64_t total = 0;
  for (const auto& old : checkpoint.ranks) total += pending_samples(old);
  const std::uint64_t base = total / world_size, remainder = total % world_size;
  const std::uint64_t begin = rank * base + std::min<std::uint64_t>(rank, remainder);
  const std::uint64_t end = begin + base + (rank < remainder ? 1 : 0);
  std::vector<PendingSlice> slices;
  std::uint64_t offset = 0;  // of the old rank's sequence in the concatenation
  for (const auto& old : checkpoint.ranks) {
    const std::uint64_t size = pending_samples(old);
    const std::uint64_t from = std::max(begin, offset), to = std::min(end, offset + size);
    if (from < to) slices.push_back({old.rank, from - offset, to - offset});
    offset += size;
  }
  return slices;
}

}  // namespace odbatch
