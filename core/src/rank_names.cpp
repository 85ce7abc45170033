#include "odbatch/core/rank_names.hpp"

namespace odbatch {

std::string rank_names(std::span<const std::uint32_t> ranks) {
  if (ranks.empty()) return "no rank";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return out;
}

}  // namespace odbatch
