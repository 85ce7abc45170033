#include "odbatch/source/file_descriptor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

std::string system_reason(int error) {
  return std::error_code(error, std::generic_category()).message();
}

[[noreturn]] void throw_system_error(const std::string& path, const char* action) {
  throw DatasetError(path + ": cannot " + action + ": " + system_reason(errno));
}

// "not a regular file (a FIFO)".
std::string not_regular(mode_t mode) {
  const char* kind = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "of an unknown kind";
  return std::string("not a regular file (") + kind + ")";
}

}  // namespace

std::variant<FileDescriptor, FileDescriptor::OpenFailure> FileDescriptor::try_open_regular_file(
    const std::string& path) {
  int fd = -1;
  do {
    // O_NONBLOCK changes nothing for a regular file's reads, so it need not be cleared.
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int error = errno;
    return OpenFailure{error, "cannot open: " + system_reason(error)};
  }
  FileDescriptor file(fd, path);
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    const int error = errno;
    return OpenFailure{error, "cannot stat: " + system_reason(error)};
  }
  if (!S_ISREG(status.st_mode)) return OpenFailure{0, not_regular(status.st_mode)};
  file.size_when_opened_ = static_cast<std::uint64_t>(status.st_size);
  file.identity_ = std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino);
  file.modified_ns_when_opened_ =
      static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec;
  return file;
}

FileDescriptor FileDescriptor::open_regular_file(const std::string& path) {
  auto opened = try_open_regular_file(path);
  if (auto* failure = std::get_if<OpenFailure>(&opened))
    throw DatasetError(path + ": " + failure->problem);
  return std::get<FileDescriptor>(std::move(opened));
}

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_when_opened_(other.size_when_opened_),
      modified_ns_when_opened_(other.modified_ns_when_opened_),
      identity_(std::move(other.identity_)) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_when_opened_ = other.size_when_opened_;
    modified_ns_when_opened_ = other.modified_ns_when_opened_;
    identity_ = std::move(other.identity_);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
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
