#pragma once
// The fields of one 512-byte tar header block that the shard indexer reads itself, where
// libarchive stopped: the type, the data size and the name. Private to the source library.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace odbatch {

struct TarHeaderFields {
  char type = '0';  // '0' a file, 'x' a pax extended header, ...
  std::uint64_t size = 0;
  std::string path;  // ustar's prefix and name
};

// The fields of `block` (512 bytes, its checksum already checked); nothing when its size field
// is neither octal nor base-256.
std::optional<TarHeaderFields> tar_header_fields(std::string_view block);

}  // namespace odbatch
