#pragma once
// The pipeline file's keys that may differ from rank to rank, each with the reason it cannot
// change a batch: pool sizes, capacities, deadlines and diagnostics. Every other key decides
// batches and is compared across ranks at each epoch's first round (checkpoint_settings() names
// them), so a rank configured apart fails there instead of losing or duplicating samples.
#include <span>
#include <string_view>

namespace odbatch {

struct RankLocalKey {
  std::string_view key;  // "table.key"
  std::string_view why;
};

std::span<const RankLocalKey> rank_local_keys();

}  // namespace odbatch
