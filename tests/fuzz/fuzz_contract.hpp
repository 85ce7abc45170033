#pragma once
// A promise of the code under test that an input broke: the target and the promise are printed
// and the process aborts, which libFuzzer records as a crash (saving the input) and ctest as a
// failed test.
#include <string_view>

namespace odbatch::fuzz {

[[noreturn]] void contract_broken(std::string_view target, std::string_view promise);

inline void expect(bool holds, std::string_view target, std::string_view promise) {
  if (!holds) contract_broken(target, promise);
}

}  // namespace odbatch::fuzz
