// libFuzzer target tokenizer_json: see fuzz_entries.hpp.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  odbatch::fuzz::tokenizer_json({data, size});
  return 0;
}
