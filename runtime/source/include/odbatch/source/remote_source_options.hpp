#pragma once
// How dataset files named by http:// or https:// URLs are read: the local cache of their bytes,
// timeouts and retries (http_byte_source.hpp).
#include <chrono>
#include <cstdint>
#include <filesystem>

namespace odbatch {

struct RemoteSourceOptions {
  // Where fetched blocks (files named *.blk) and remote shards' indexes are kept, so that a later
  // run finds them; empty: blocks are kept in memory only.
  std::filesystem::path cache_dir;
  // Bytes the block cache may hold; least recently used blocks are evicted beyond it. 0: no
  // cache, every read is a ranged GET of exactly its bytes.
  std::uint64_t cache_bytes = std::uint64_t{1} << 30;
  // The unit of the cache: reads fetch whole aligned blocks of this size (the last one shorter).
  std::uint64_t block_bytes = std::uint64_t{1} << 20;
  // Deadline for one ranged request, from connecting to the last byte. A sequential pass (one
  // long GET) is bounded instead by its pace: fewer than block_bytes received within any
  // request_timeout is a stall, retried as a failure.
  std::chrono::milliseconds request_timeout{30'000};
  // Attempts per request, waiting backoff, 2 x backoff, ... between them.
  std::uint32_t attempts = 4;
  std::chrono::milliseconds backoff{200};
  // PEM certificates that verify HTTPS servers instead of the system's (a private CA); empty:
  // the system's (Debian's ca-certificates).
  std::filesystem::path ca_file;
};

}  // namespace odbatch
