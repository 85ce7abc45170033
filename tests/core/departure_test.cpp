#include "odbatch/core/departure.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace odbatch {
namespace {

TEST_CASE("a departure survives the store's text") {
  for (const Departure d : {Departure{0, 0}, Departure{3, 17}, Departure{~0ull, ~0ull}}) {
    const auto decoded = decode_departure(encode_departure(d));
    REQUIRE(decoded);
    CHECK(*decoded == d);
  }
}

TEST_CASE("text that is not a departure decodes to nothing") {
  for (const char* text :
       {"", "3", "3 ", " 3 4", "3 4 ", "3  4", "3 x", "-1 4", "3 4 5", "99999999999999999999 1"})
    CHECK_MESSAGE(!decode_departure(text), text);
}

TEST_CASE("ranks that agree pass, any disagreement names both ranks and steps") {
  CHECK(!departure_disagreement(std::vector<Departure>{}));
  CHECK(!departure_disagreement(std::vector<Departure>{{1, 40}}));
  CHECK(!departure_disagreement(std::vector<Departure>{{1, 40}, {1, 40}, {1, 40}}));
  const auto steps = departure_disagreement(std::vector<Departure>{{1, 40}, {1, 40}, {1, 41}});
  REQUIRE(steps);
  CHECK(*steps ==
        "rank 0 departs at step 40 of epoch 1 but rank 2 at step 41 of epoch 1: ranks must "
        "depart at an agreed step");
  const auto epochs = departure_disagreement(std::vector<Departure>{{1, 40}, {2, 40}});
  REQUIRE(epochs);
  CHECK(epochs->find("rank 1 at step 40 of epoch 2") != std::string::npos);
}

}  // namespace
}  // namespace odbatch
