#include "fuzz_contract.hpp"

#include <cstdio>
#include <cstdlib>

namespace odbatch::fuzz {

void contract_broken(std::string_view target, std::string_view promise) {
  std::fprintf(stderr, "fuzz target %.*s: broken promise: %.*s\n", static_cast<int>(target.size()),
               target.data(), static_cast<int>(promise.size()), promise.data());
  std::abort();
}

}  // namespace odbatch::fuzz
