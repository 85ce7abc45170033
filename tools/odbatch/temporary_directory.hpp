#pragma once
// A private directory under the system's temporary directory, removed with everything in it
// when the object goes: for the files a command writes only for itself.
#include <filesystem>
#include <string_view>

namespace odbatch::cli {

class TemporaryDirectory {
 public:
  // Creates temp/<prefix>-XXXXXX; throws std::runtime_error saying why it cannot.
  explicit TemporaryDirectory(std::string_view prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace odbatch::cli
