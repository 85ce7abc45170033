#pragma once
// Shell-style brace expansion for shard lists, as WebDataset users write them:
// "shard-{000000..000127}.tar" (a numeric range, zero-padded to the width of its wider end),
// "{train,val}/part-{0..3}.tar" (alternatives, and several groups: their product, left to right).
// A brace without a matching close or without ".." or "," inside is kept literally.
#include <string>
#include <string_view>
#include <vector>

namespace odbatch {

// Throws DatasetError naming the pattern when it would expand to more than `limit` names or a
// range's ends are not both numbers.
std::vector<std::string> expand_braces(std::string_view pattern, std::size_t limit = 1'000'000);

}  // namespace odbatch
