#pragma once
// A test case that cannot run on this machine (no nginx, no dataset, no GPU, not root) says what it
// needs and why, and returns: odbatch_test_suite marks every test whose output carries the marker
// below Skipped (SKIP_REGULAR_EXPRESSION), so CTest never counts it Passed. A machine that promises
// a need (CI provisions nginx, openssl and the dataset) lists it in ODBATCH_TESTS_REQUIRE, and
// there the same skip fails the test instead.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

namespace odbatch::test {

// Whether ODBATCH_TESTS_REQUIRE (comma-separated needs, e.g. "nginx,dataset") lists `need`.
inline bool need_is_required(std::string_view need) {
  const char* listed = std::getenv("ODBATCH_TESTS_REQUIRE");
  if (listed == nullptr) return false;
  std::stringstream needs{std::string(listed)};
  std::string item;
  while (std::getline(needs, item, ','))
    if (item == need) return true;
  return false;
}

// Reports that the current test case is skipped for want of `need`, or fails it where the need is
// required; the caller then returns.
inline void report_skip(std::string_view need, const std::string& why) {
  if (need_is_required(need)) FAIL("required " << need << ": " << why);
  MESSAGE("ODBATCH-TEST-SKIPPED (needs " << need << "): " << why);
}

}  // namespace odbatch::test

// Skips the current test case for want of `need` ("nginx", "openssl", "dataset", "root", "gpu"),
// `why` streamed as in MESSAGE; fails it where the need is required.
#define ODBATCH_SKIP_TEST(need, why)                            \
  do {                                                          \
    std::ostringstream odbatch_skip_why;                        \
    odbatch_skip_why << why;                                    \
    ::odbatch::test::report_skip(need, odbatch_skip_why.str()); \
    return;                                                     \
  } while (false)
