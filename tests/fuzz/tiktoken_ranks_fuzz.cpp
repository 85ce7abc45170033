// libFuzzer target tiktoken_ranks: see fuzz_entries.hpp.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  odbatch::fuzz::tiktoken_ranks({data, size});
  return 0;
}
