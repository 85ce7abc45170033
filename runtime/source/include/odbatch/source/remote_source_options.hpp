#pragma once
// How dataset files named by http:// or https:// URLs are read: the local cache of their bytes,
// timeouts and retries (http_byte_source.hpp).
#include <chrono>
#include <cstdint>
#include <filesystem>

namespace odbatch {

struct RemoteSourceOptions {
  // Where fetched byte ranges and remote shards' indexes are kept; empty: no disk cache.
  std::filesystem::path cache_dir;
  // Bytes the range cache may hold; least recently used ranges are evicted beyond it.
  std::uint64_t cache_bytes = std::uint64_t{1} << 30;
  // Deadline for one request, from connecting to the last byte.
  std::chrono::milliseconds request_timeout{30'000};
  // Attempts per request, waiting backoff, 2 x backoff, ... between them.
  std::uint32_t attempts = 4;
  std::chrono::milliseconds backoff{200};
};

}  // namespace odbatch
