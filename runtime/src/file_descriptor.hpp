#pragma once
// An owned POSIX file descriptor, for the dataset readers' streaming and positioned reads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace odbatch {

class FileDescriptor {
 public:
  // Opens `path` read-only; throws DatasetError naming the path and the system's reason.
  static FileDescriptor open_for_reading(const std::string& path);

  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  // Size of a regular file; throws DatasetError if it is not one.
  std::uint64_t regular_file_size() const;

  // Reads up to `size` bytes at the current position (0 at end of file), retrying interrupted
  // reads; throws DatasetError on failure.
  std::size_t read_some(char* data, std::size_t size) const;

  // Reads up to `size` bytes at `offset` without moving the position, so concurrent calls are
  // safe; fewer bytes only at end of file. Throws DatasetError on failure.
  std::size_t read_at(char* data, std::size_t size, std::uint64_t offset) const;

  const std::string& path() const { return path_; }

 private:
  FileDescriptor(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::string path_;
};

}  // namespace odbatch
