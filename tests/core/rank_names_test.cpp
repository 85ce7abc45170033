#include "odbatch/core/rank_names.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace odbatch {
namespace {

TEST_CASE("ranks are named singular, plural, or not at all") {
  CHECK(rank_names(std::vector<std::uint32_t>{}) == "no rank");
  CHECK(rank_names(std::vector<std::uint32_t>{7}) == "rank 7");
  CHECK(rank_names(std::vector<std::uint32_t>{0, 3, 12}) == "ranks 0, 3, 12");
}

}  // namespace
}  // namespace odbatch
