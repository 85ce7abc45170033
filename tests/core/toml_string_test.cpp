#include "odbatch/core/toml_string.hpp"

#include <doctest/doctest.h>

namespace odbatch {

TEST_CASE("text as a TOML basic string escapes quotes, backslashes and control characters") {
  CHECK(toml_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\u000a\"");
  CHECK(toml_string("") == "\"\"");
  CHECK(toml_string("caf\xc3\xa9\x7f") == "\"caf\xc3\xa9\\u007f\"");
}

}  // namespace odbatch
