#include "odbatch/image/image_file.hpp"

#include <cerrno>
#include <string>
#include <variant>

#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/file_descriptor.hpp"

namespace odbatch {
namespace {

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
  auto opened = FileDescriptor::try_open_regular_file(path.string());
  if (const auto* failure = std::get_if<FileDescriptor::OpenFailure>(&opened)) {
    if (failure->error == ENOENT || failure->error == ENOTDIR)
      return error_at(ImageErrorKind::missing_file, path, "no such file");
    return error_at(ImageErrorKind::unreadable, path, failure->problem);
  }
  const auto& file = std::get<FileDescriptor>(opened);
  const auto size = file.size_when_opened();
  if (size > limits.max_file_bytes)
    return error_at(ImageErrorKind::pixel_bomb, path,
                    std::to_string(size) + " bytes, over the limit of " +
                        std::to_string(limits.max_file_bytes));

  std::vector<std::uint8_t> bytes(size);
  std::size_t got = 0;
  try {
    got = file.read_at(reinterpret_cast<char*>(bytes.data()), bytes.size(), 0);
  } catch (const DatasetError& e) {  // names the path already
    return ImageError{ImageErrorKind::unreadable, e.what()};
  }
  if (got != bytes.size())
    return error_at(ImageErrorKind::unreadable, path,
                    "shrank from " + std::to_string(size) + " to " + std::to_string(got) +
                        " bytes while being read");
  return bytes;
}

}  // namespace odbatch
