#include "odbatch/source/regular_file.hpp"

#include <string_view>
#include <utility>
#include <variant>

#include "odbatch/source/file_descriptor.hpp"

namespace odbatch {

FileReadError::FileReadError(const std::string& path, std::string problem)
    : DatasetError(path + ": " + problem), problem_(std::move(problem)) {}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  auto opened = FileDescriptor::try_open_regular_file(path);
  if (const auto* failure = std::get_if<FileDescriptor::OpenFailure>(&opened))
    throw FileReadError(path, failure->problem);
  const auto& file = std::get<FileDescriptor>(opened);
  const auto too_large = [&] {
    return FileReadError(path, "larger than the limit of " + std::to_string(max_bytes) + " bytes");
  };
  if (file.size_when_opened() > max_bytes) throw too_large();
  // The bytes read count, not the size when opened: the file may grow meanwhile.
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(file.size_when_opened()));
  char buffer[1 << 16];
  try {
    while (const std::size_t got = file.read_some(buffer, sizeof buffer)) {
      if (bytes.size() + got > max_bytes) throw too_large();
      bytes.append(buffer, got);
    }
  } catch (const FileReadError&) {
    throw;
  } catch (const DatasetError& e) {
    // read_some's message is "path: cannot read: why".
    const std::string_view text = e.what();
    const std::string prefix = path + ": ";
    throw FileReadError(path,
                        std::string(text.starts_with(prefix) ? text.substr(prefix.size()) : text));
  }
  return bytes;
}

}  // namespace odbatch
