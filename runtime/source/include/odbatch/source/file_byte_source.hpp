#pragma once
// A local regular file as a ByteSource: positioned reads on a descriptor kept open.
#include <memory>
#include <string>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/file_descriptor.hpp"

namespace odbatch {

class FileByteSource final : public ByteSource {
 public:
  // Throws DatasetError naming the path when it is not a readable regular file.
  explicit FileByteSource(const std::string& path);

  const std::string& name() const override { return file_.path(); }
  std::uint64_t size() const override { return file_.size_when_opened(); }
  // "file:<size>:<modification time in ns>".
  std::string version() const override;
  // "file:<device>:<inode>".
  std::string identity() const override { return "file:" + file_.identity(); }
  std::size_t read_at(char* data, std::size_t length, std::uint64_t offset) const override;
  void read_sequentially(std::uint64_t offset,
                         const std::function<bool(std::string_view)>& consume) const override;

 private:
  FileDescriptor file_;
};

}  // namespace odbatch
