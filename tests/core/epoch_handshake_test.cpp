#include "odbatch/core/epoch_handshake.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace odbatch {
namespace {

// What an allgather of each rank's words delivers: rank after rank.
std::vector<std::uint64_t> gather(const std::vector<HandshakeWords>& ranks) {
  std::vector<std::uint64_t> all;
  for (const auto& words : ranks) all.insert(all.end(), words.begin(), words.end());
  return all;
}

TEST_CASE("agreeing ranks pass, at an epoch's start and at its end") {
  CHECK(!handshake_disagreement(gather({handshake_words(77, 10), handshake_words(77, 10)}), true,
                                "end of epoch 0"));
  CHECK(!handshake_disagreement(gather({handshake_words(77, 0)}), true, "end of epoch 0"));
}

TEST_CASE("a differing fingerprint fails, naming the rank and both values") {
  const auto message = handshake_disagreement(
      gather({handshake_words(5, 0), handshake_words(5, 0), handshake_words(9, 0)}), false,
      "start of epoch 2");
  REQUIRE(message);
  CHECK(*message ==
        "NCCL handshake at the start of epoch 2: rank 2's batching fingerprint 9 differs from rank "
        "0's 5: they do not run the same batching config");
}

TEST_CASE("differing step counts fail at an epoch's end, never at its start") {
  const auto gathered =
      gather({handshake_words(1, 40), handshake_words(1, 41), handshake_words(1, 40)});
  const auto message = handshake_disagreement(gathered, true, "end of epoch 0");
  REQUIRE(message);
  CHECK(message->find("rank 1 ran 41 steps, rank 0 40") != std::string::npos);
  CHECK(!handshake_disagreement(gathered, false, "start of epoch 0"));
}

TEST_CASE("gathered words that are not whole contributions are refused") {
  const std::vector<std::uint64_t> odd{1, 2, 3};
  CHECK_THROWS_AS(handshake_disagreement(odd, true, "end"), std::invalid_argument);
  CHECK_THROWS_AS(handshake_disagreement({}, true, "end"), std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
