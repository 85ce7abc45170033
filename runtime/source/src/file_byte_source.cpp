#include "odbatch/source/file_byte_source.hpp"

#include <vector>

namespace odbatch {
namespace {

constexpr std::size_t kSequentialChunkBytes = std::size_t{1} << 20;

}  // namespace

FileByteSource::FileByteSource(const std::string& path)
    : file_(FileDescriptor::open_regular_file(path)) {}

std::string FileByteSource::version() const {
  return "file:" + std::to_string(file_.size_when_opened()) + ":" +
         std::to_string(file_.modified_ns_when_opened());
}

std::size_t FileByteSource::read_at(char* data, std::size_t length, std::uint64_t offset) const {
  return file_.read_at(data, length, offset);
}

void FileByteSource::read_sequentially(std::uint64_t offset,
                                       const std::function<bool(std::string_view)>& consume) const {
  std::vector<char> chunk(kSequentialChunkBytes);
  for (;;) {
    const std::size_t got = file_.read_at(chunk.data(), chunk.size(), offset);
    if (got == 0 || !consume(std::string_view(chunk.data(), got))) return;
    offset += got;
  }
}

}  // namespace odbatch
