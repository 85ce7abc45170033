#pragma once
// An owned POSIX file descriptor of a regular file, for the dataset readers' streaming and
// positioned reads. Every dataset, record and image file is opened through it, so none can be a
// FIFO or a device that blocks open() or read() forever.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace odbatch {

class FileDescriptor {
 public:
  // Why a path could not be opened as a regular file.
  struct OpenFailure {
    int error = 0;        // the system's errno; 0 when the path is not a regular file
    std::string problem;  // e.g. "cannot open: Permission denied", without the path
  };

  // Opens `path` read-only, never blocking: opening a FIFO waits for a writer unless it is
  // non-blocking, so the open is, and anything but a regular file is refused after it.
  static std::variant<FileDescriptor, OpenFailure> try_open_regular_file(const std::string& path);
  // The same, throwing DatasetError "path: problem".
  static FileDescriptor open_regular_file(const std::string& path);

  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  // The file's size when it was opened.
  std::uint64_t size_when_opened() const { return size_when_opened_; }
  // "<device>:<inode>", the same for every name of the file.
  std::string identity() const { return identity_; }
  // Its modification time then, in nanoseconds since the epoch.
  std::int64_t modified_ns_when_opened() const { return modified_ns_when_opened_; }

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
  std::uint64_t size_when_opened_ = 0;
  std::int64_t modified_ns_when_opened_ = 0;
  std::string identity_;
};

}  // namespace odbatch
