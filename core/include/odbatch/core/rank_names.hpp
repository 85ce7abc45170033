#pragma once
// Ranks named in messages: "rank 2", "ranks 0, 3".
#include <cstdint>
#include <span>
#include <string>

namespace odbatch {

// "rank R" for one rank, "ranks A, B, ..." for several, "no rank" for none.
std::string rank_names(std::span<const std::uint32_t> ranks);

}  // namespace odbatch
