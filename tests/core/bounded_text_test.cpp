#include "odbatch/core/bounded_text.hpp"

#include <doctest/doctest.h>

#include <string>

namespace odbatch {

TEST_CASE("bounded text: short text stays, long text is cut with its size noted") {
  CHECK(bounded_text("", 4) == "");
  CHECK(bounded_text("abcd", 4) == "abcd");
  CHECK(bounded_text("abcdef", 4) == "abcd... (6 bytes in all)");
  CHECK(bounded_text(std::string(60'000'000, 'x'), 1024).size() == 1024 + 27);
  // "é" is two bytes: a cut between them backs up to before the sequence.
  CHECK(bounded_text("ab\xc3\xa9z", 3) == "ab... (5 bytes in all)");
  CHECK(bounded_text("ab\xc3\xa9z", 4) == "ab\xc3\xa9... (5 bytes in all)");
}

}  // namespace odbatch
