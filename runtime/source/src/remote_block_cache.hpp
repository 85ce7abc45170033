#pragma once
// The blocks of remote files fetched so far, bounded by bytes with least-recently-used eviction:
// in memory, or as one file per block under a directory that later runs (and other processes)
// find. A block is named by a key that includes its file's URL and version, so a block of another
// version is never used. Concurrent readers of a missing block wait for one fetch. A block file
// ends with a checksum of its bytes, checked the first time this process reads the file: a file
// edited or damaged on disk is logged, removed and fetched again, never served.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace odbatch {

class RemoteBlockCache {
 public:
  // The cache every source opened with the same directory and capacity shares in this process,
  // so that the bound holds for all of them together.
  static std::shared_ptr<RemoteBlockCache> shared(const std::filesystem::path& directory,
                                                  std::uint64_t capacity_bytes);

  // `directory` empty: blocks in memory. Otherwise it is created, and the blocks already in it
  // are counted (the oldest evicted first).
  RemoteBlockCache(std::filesystem::path directory, std::uint64_t capacity_bytes);

  // Copies `length` bytes at `offset` of the block named `key` (of `block_size` bytes) to `out`.
  // When the block is not cached, `fetch` returns its bytes and the cache keeps them. Returns
  // true when no fetch was needed. Exceptions of `fetch` reach every reader waiting for it.
  bool read(const std::string& key, std::uint64_t block_size, std::uint64_t offset,
            std::size_t length, char* out, const std::function<std::string()>& fetch);

  // Keeps `bytes` as the block named `key` unless it is cached or being fetched already.
  void insert(const std::string& key, std::string bytes);

  std::uint64_t cached_bytes() const;

 private:
  using BlockData = std::shared_ptr<const std::string>;
  struct Entry {
    bool ready = false;
    bool verified = false;  // on disk: its checksum was checked, or this process wrote it
    std::uint64_t bytes = 0;
    BlockData data;                            // in memory only
    std::shared_future<BlockData> pending;     // while it is being fetched
    std::list<std::string>::iterator recency;  // valid when ready
  };

  std::filesystem::path block_path(const std::string& key) const;
  void adopt_locked(const std::string& key, std::uint64_t bytes, bool verified);
  // Drops a ready entry from the count (not its file).
  void forget_locked(std::unordered_map<std::string, Entry>::iterator entry);
  void evict_locked();
  // False when the block could not be written (a full disk): it is then served uncached.
  bool store_on_disk(const std::string& key, const std::string& bytes) const;
  // The block's bytes from its file when the checksum matches; nothing when the file is gone,
  // short, or fails the check (then it is removed, and a mismatch is logged).
  std::optional<std::string> read_verified(const std::string& key, std::uint64_t block_size) const;

  const std::filesystem::path directory_;
  const std::uint64_t capacity_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> recency_;  // most recently used first; ready entries only
  std::uint64_t cached_bytes_ = 0;
};

}  // namespace odbatch
