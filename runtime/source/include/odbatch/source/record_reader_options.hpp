#pragma once
// The record reader's options, apart from RecordReader, so that a configuration holds them
// without the reader.
#include <cstdint>
#include <string>

namespace odbatch {

struct RecordReaderOptions {
  // Longer records are rejected (record_too_long) without being read into memory.
  // Of a tar shard sample, images included.
  std::uint64_t max_record_bytes = std::uint64_t{64} << 20;
  // The extension of a tar shard sample's member holding its conversation record.
  std::string conversation_member = "json";
};

}  // namespace odbatch
