#include "remote_block_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

#include "odbatch/log/logger.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "stored_checksum.hpp"

namespace odbatch {
namespace {

constexpr std::string_view kBlockSuffix = ".blk";
// A block file is the block's bytes, their checksum (8 bytes, little-endian) and this tag.
constexpr std::string_view kTrailerTag = "odbblk01";
constexpr std::uint64_t kTrailerBytes = kStoredChecksumBytes + kTrailerTag.size();
constexpr std::uint64_t kChecksumDomain = 0x626c6f636b73756dULL;  // "blocksum"

std::string trailer_of(std::string_view bytes) {
  return stored_checksum(kChecksumDomain, bytes) + std::string(kTrailerTag);
}

// Reads exactly `length` bytes at `offset` of the file at `path`; false when it is gone or short
// (another process sharing the directory evicted it).
bool read_file_range(const std::filesystem::path& path, std::uint64_t offset, std::size_t length,
                     char* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  ::close(fd);
  return done == length;
}

}  // namespace

std::shared_ptr<RemoteBlockCache> RemoteBlockCache::shared(const std::filesystem::path& directory,
                                                           std::uint64_t capacity_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::uint64_t>, std::weak_ptr<RemoteBlockCache>> caches;
  std::lock_guard lock(mutex);
  auto& slot = caches[{directory.lexically_normal().string(), capacity_bytes}];
  if (auto cache = slot.lock()) return cache;
  auto cache = std::make_shared<RemoteBlockCache>(directory, capacity_bytes);
  slot = cache;
  return cache;
}

RemoteBlockCache::RemoteBlockCache(std::filesystem::path directory, std::uint64_t capacity_bytes)
    : directory_(std::move(directory)), capacity_bytes_(capacity_bytes) {
  if (directory_.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    throw DatasetError(directory_.string() +
                       ": cannot create the cache directory: " + error.message());
  }
  struct Found {
    std::filesystem::file_time_type written;
    std::string key;
    std::uint64_t bytes;
  };
  std::vector<Found> found;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(kBlockSuffix) || !entry.is_regular_file(error)) continue;
    const std::uint64_t file_bytes = entry.file_size(error);
    if (error || file_bytes < kTrailerBytes) continue;
    found.push_back({entry.last_write_time(error),
                     name.substr(0, name.size() - kBlockSuffix.size()),
                     file_bytes - kTrailerBytes});
  }
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.written < b.written; });
  std::lock_guard lock(mutex_);
  for (const Found& block : found) adopt_locked(block.key, block.bytes, false);
  evict_locked();
}

std::filesystem::path RemoteBlockCache::block_path(const std::string& key) const {
  return directory_ / (key + std::string(kBlockSuffix));
}

void RemoteBlockCache::adopt_locked(const std::string& key, std::uint64_t bytes, bool verified) {
  Entry& entry = entries_[key];
  entry.ready = true;
  entry.verified = verified;
  entry.bytes = bytes;
  recency_.push_front(key);
  entry.recency = recency_.begin();
  cached_bytes_ += bytes;
}

void RemoteBlockCache::forget_locked(std::unordered_map<std::string, Entry>::iterator entry) {
  cached_bytes_ -= entry->second.bytes;
  recency_.erase(entry->second.recency);
  entries_.erase(entry);
}

void RemoteBlockCache::evict_locked() {
  while (cached_bytes_ > capacity_bytes_ && !recency_.empty()) {
    const std::string key = recency_.back();
    forget_locked(entries_.find(key));
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove(block_path(key), ignored);
    }
  }
}

bool RemoteBlockCache::store_on_disk(const std::string& key, const std::string& bytes) const {
  // Written aside and renamed, so a reader (in any process) never sees half a block.
  static std::atomic<std::uint64_t> sequence{0};
  const std::filesystem::path final_path = block_path(key);
  std::filesystem::path temporary = final_path;
  temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(sequence++);
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const std::string trailer = trailer_of(bytes);
  out.write(trailer.data(), static_cast<std::streamsize>(trailer.size()));
  out.close();
  std::error_code error;
  if (out) std::filesystem::rename(temporary, final_path, error);
  if (!out || error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  return true;
}

std::optional<std::string> RemoteBlockCache::read_verified(const std::string& key,
                                                           std::uint64_t block_size) const {
  std::string file(block_size + kTrailerBytes, '\0');
  if (!read_file_range(block_path(key), 0, file.size(), file.data())) return std::nullopt;
  std::string bytes = file.substr(0, block_size);
  if (std::string_view(file).substr(block_size) == trailer_of(bytes)) return bytes;
  if (log_enabled(LogLevel::warn)) {
    Logger().warn(block_path(key).string() +
                  ": cached block fails its checksum (changed on disk); fetched again");
  }
  std::error_code ignored;
  std::filesystem::remove(block_path(key), ignored);
  return std::nullopt;
}

bool RemoteBlockCache::read(const std::string& key, std::uint64_t block_size, std::uint64_t offset,
                            std::size_t length, char* out,
                            const std::function<std::string()>& fetch) {
  for (;;) {
    std::unique_lock lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() && !directory_.empty()) {
      // Another process may have written it since this cache looked.
      std::error_code error;
      const auto bytes = std::filesystem::file_size(block_path(key), error);
      if (!error && bytes == block_size + kTrailerBytes) {
        adopt_locked(key, block_size, false);
        evict_locked();
        it = entries_.find(key);
      }
    }
    if (it != entries_.end() && it->second.ready && it->second.bytes != block_size) {
      // A file of another size under this name (left by a crash, or edited): fetched again.
      forget_locked(it);
      it = entries_.end();
    }
    if (it != entries_.end()) {
      Entry& entry = it->second;
      if (!entry.ready) {
        auto pending = entry.pending;
        lock.unlock();
        const BlockData data = pending.get();
        std::memcpy(out, data->data() + offset, length);
        return true;
      }
      recency_.splice(recency_.begin(), recency_, entry.recency);
      if (directory_.empty()) {
        const BlockData data = entry.data;
        lock.unlock();
        std::memcpy(out, data->data() + offset, length);
        return true;
      }
      if (!entry.verified) {
        lock.unlock();
        if (const auto bytes = read_verified(key, block_size)) {
          std::memcpy(out, bytes->data() + offset, length);
          lock.lock();
          if (const auto now = entries_.find(key); now != entries_.end() && now->second.ready)
            now->second.verified = true;
          return true;
        }
        lock.lock();
        it = entries_.find(key);
        if (it != entries_.end() && it->second.ready) forget_locked(it);
        continue;
      }
      lock.unlock();
      if (read_file_range(block_path(key), offset, length, out)) return true;
      // Gone: forget it and fetch it again.
      lock.lock();
      it = entries_.find(key);
      if (it != entries_.end() && it->second.ready) forget_locked(it);
      continue;
    }

    std::promise<BlockData> promise;
    Entry& entry = entries_[key];
    entry.pending = promise.get_future().share();
    lock.unlock();
    BlockData data;
    try {
      data = std::make_shared<const std::string>(fetch());
    } catch (...) {
      lock.lock();
      entries_.erase(key);
      lock.unlock();
      promise.set_exception(std::current_exception());
      throw;
    }
    const bool kept = directory_.empty() || store_on_disk(key, *data);
    lock.lock();
    entries_.erase(key);
    if (kept) {
      adopt_locked(key, data->size(), true);
      if (directory_.empty()) entries_.at(key).data = data;
      evict_locked();
    }
    lock.unlock();
    promise.set_value(data);
    std::memcpy(out, data->data() + offset, length);
    return false;
  }
}

void RemoteBlockCache::insert(const std::string& key, std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    if (entries_.contains(key)) return;
  }
  auto data = std::make_shared<const std::string>(std::move(bytes));
  if (!directory_.empty() && !store_on_disk(key, *data)) return;
  std::lock_guard lock(mutex_);
  // A reader may have fetched it meanwhile.
  if (entries_.contains(key)) return;
  adopt_locked(key, data->size(), true);
  if (directory_.empty()) entries_.at(key).data = std::move(data);
  evict_locked();
}

std::uint64_t RemoteBlockCache::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

}  // namespace odbatch
