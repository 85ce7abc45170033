#include "odbatch/core/hex_digest.hpp"

#include <doctest/doctest.h>

namespace odbatch {

TEST_CASE("digests read back from their hex text, and nothing else does") {
  for (const std::uint64_t value : {0ULL, 1ULL, 0x9007199254740993ULL, ~0ULL}) {
    CHECK(hex_digest(value).size() == 18);
    CHECK(parse_hex_digest(hex_digest(value)) == value);
  }
  CHECK(hex_digest(0x4d2) == "0x00000000000004d2");
  CHECK(parse_hex_digest("0xABCdef") == 0xabcdefULL);
  for (const char* bad : {"", "0x", "4d2", "0x4g", "0x00000000000000001", "0X12", " 0x1"})
    CHECK_FALSE(parse_hex_digest(bad).has_value());
}

}  // namespace odbatch
