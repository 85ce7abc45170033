// A file is read once however it is named: a hard link, a symbolic link or a ".." spelling of a
// listed file is the same file (device and inode), and listing it again is an error naming both
// names, never every sample read twice.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

std::string error_of(const std::vector<std::vector<std::string>>& sources) {
  try {
    DatasetIndex::build_sources(sources);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a file reached by a second name is refused naming both") {
  test::ScratchDirectory dir;
  const auto a = dir.write("a.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
  const auto hard = dir / "hard.jsonl";
  std::filesystem::create_hard_link(a, hard);
  const auto soft = dir / "soft.jsonl";
  std::filesystem::create_symlink(a, soft);
  std::filesystem::create_directory(dir / "sub");
  const auto dotted = dir / "sub/../a.jsonl";
  for (const auto& other : {hard, soft, dotted}) {
    CAPTURE(other);
    const std::string error = error_of({{a, other}});
    CHECK(error.find(other) != std::string::npos);
    CHECK(error.find(a) != std::string::npos);
    // Across sources of a mix too.
    CHECK(error_of({{a}, {other}}) != "no error");
  }
  struct stat status {};
  REQUIRE(::stat(a.c_str(), &status) == 0);
  CHECK(error_of({{a, hard}}) == "dataset file '" + hard + "' is the file '" + a +
                                     "' again (file:" + std::to_string(status.st_dev) + ":" +
                                     std::to_string(status.st_ino) +
                                     "); each file may be listed once, or its samples would be "
                                     "read twice");
}

}  // namespace odbatch
