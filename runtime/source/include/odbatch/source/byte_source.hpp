#pragma once
// The bytes of one dataset file, wherever it lies: a local file read with pread, or a URL read
// with ranged HTTP GETs (http_byte_source.hpp). Tar shards are indexed and read through it, so
// the same index and reader serve local and remote shards.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace odbatch {

class ByteSource {
 public:
  ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  virtual ~ByteSource() = default;

  // The path or URL, as messages name the file.
  virtual const std::string& name() const = 0;

  // The size when the source was opened.
  virtual std::uint64_t size() const = 0;

  // What identifies this version of the bytes, for caches of derived data (a tar shard's index):
  // e.g. size and modification time of a file, size and ETag of a URL. Equal versions promise
  // equal bytes.
  virtual std::string version() const = 0;

  // Which file this is, whatever name it was given: device and inode of a local file (a hard
  // link, a symlink or a ".." spelling is the same file), the server's address, the path and the
  // version of a URL (a host name and its address are the same server). Equal identities
  // promise the same bytes, so a dataset lists each identity once.
  virtual std::string identity() const = 0;

  // Reads up to `length` bytes at `offset`; fewer only at the end. Thread-safe: concurrent calls
  // may share one source. Throws DatasetError naming the source on failure.
  virtual std::size_t read_at(char* data, std::size_t length, std::uint64_t offset) const = 0;

  // Hands the bytes from `offset` to the end to `consume`, in order and in chunks, until it
  // returns false: one sequential pass (a single GET for a URL, not ranged reads). Throws
  // DatasetError naming the source on failure.
  virtual void read_sequentially(std::uint64_t offset,
                                 const std::function<bool(std::string_view)>& consume) const = 0;
};

}  // namespace odbatch
