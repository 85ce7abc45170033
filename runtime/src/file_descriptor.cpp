#include "file_descriptor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "odbatch/runtime/dataset_error.hpp"

namespace odbatch {
namespace {

[[noreturn]] void throw_system_error(const std::string& path, const char* action) {
  throw DatasetError(path + ": cannot " + action + ": " + std::strerror(errno));
}

}  // namespace

FileDescriptor FileDescriptor::open_for_reading(const std::string& path) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_system_error(path, "open");
  return FileDescriptor(fd, path);
}

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t FileDescriptor::regular_file_size() const {
  struct stat status {};
  if (::fstat(fd_, &status) != 0) throw_system_error(path_, "stat");
  if (!S_ISREG(status.st_mode)) throw DatasetError(path_ + ": not a regular file");
  return static_cast<std::uint64_t>(status.st_size);
}

std::size_t FileDescriptor::read_some(char* data, std::size_t size) const {
  for (;;) {
    const ssize_t got = ::read(fd_, data, size);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw_system_error(path_, "read");
  }
}

std::size_t FileDescriptor::read_at(char* data, std::size_t size, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, data + done, size - done, static_cast<off_t>(offset + done));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_system_error(path_, "read");
    }
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace odbatch
