// libFuzzer target shard_list: see fuzz_entries.hpp.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  odbatch::fuzz::shard_list({data, size});
  return 0;
}
