#include "odbatch/runtime/image_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace odbatch {
namespace {

class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string system_reason(int error) {
  return std::error_code(error, std::generic_category()).message();
}

ImageError error_at(ImageErrorKind kind, const std::filesystem::path& path,
                    const std::string& problem) {
  return ImageError{kind, path.string() + ": " + problem};
}

}  // namespace

void validate(const ImageFileLimits& limits) {
  if (limits.max_file_bytes == 0) throw ConfigError("max_file_bytes", "must be positive");
}

ImageResult<std::vector<std::uint8_t>> read_image_file(const std::filesystem::path& image_root,
                                                       std::string_view relative_path,
                                                       const ImageFileLimits& limits) {
  const std::string quoted = "\"" + std::string(relative_path) + "\"";
  if (relative_path.empty())
    return ImageError{ImageErrorKind::bad_path,
                      "empty image path (under " + image_root.string() + ")"};
  if (relative_path.find('\0') != std::string_view::npos)
    return ImageError{ImageErrorKind::bad_path, "image path " + quoted + " holds a NUL byte"};
  const std::filesystem::path relative(relative_path);
  if (relative.has_root_path())
    return ImageError{ImageErrorKind::bad_path, "image path " + quoted +
                                                    " is absolute; image paths are relative to " +
                                                    image_root.string()};
  const std::filesystem::path normalised = relative.lexically_normal();
  if (!normalised.empty() && *normalised.begin() == "..")
    return ImageError{ImageErrorKind::bad_path,
                      "image path " + quoted + " escapes the image root " + image_root.string()};

  const std::filesystem::path path = image_root / normalised;
  const ScopedFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      return error_at(ImageErrorKind::missing_file, path, "no such file");
    return error_at(ImageErrorKind::unreadable, path, "cannot open: " + system_reason(error));
  }
  struct stat status {};
  if (::fstat(file.get(), &status) != 0)
    return error_at(ImageErrorKind::unreadable, path, "cannot stat: " + system_reason(errno));
  if (!S_ISREG(status.st_mode))
    return error_at(ImageErrorKind::unreadable, path, "not a regular file");
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > limits.max_file_bytes)
    return error_at(ImageErrorKind::pixel_bomb, path,
                    std::to_string(size) + " bytes, over the limit of " +
                        std::to_string(limits.max_file_bytes));

  std::vector<std::uint8_t> bytes(size);
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t got = ::read(file.get(), bytes.data() + filled, bytes.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return error_at(ImageErrorKind::unreadable, path, "read failed: " + system_reason(errno));
    if (got == 0)
      return error_at(ImageErrorKind::unreadable, path,
                      "shrank from " + std::to_string(size) + " to " + std::to_string(filled) +
                          " bytes while being read");
    filled += static_cast<std::size_t>(got);
  }
  return bytes;
}

}  // namespace odbatch
