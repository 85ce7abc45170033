// libFuzzer target tar_shard: see fuzz_entries.hpp.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  odbatch::fuzz::tar_shard({data, size});
  return 0;
}
