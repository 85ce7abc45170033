#pragma once
// The record reader's options, apart from RecordReader, so that a configuration holds them
// without the reader.
#include <cstdint>

namespace odbatch {

struct RecordReaderOptions {
  // Longer records are rejected (record_too_long) without being read into memory.
  std::uint64_t max_record_bytes = std::uint64_t{64} << 20;
};

}  // namespace odbatch
