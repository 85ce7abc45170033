#pragma once
// Real English text for the tokenizer's long-text tests: every license under
// /usr/share/common-licenses, concatenated in name order (about 270 KB on Debian 12).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace odbatch::test {

inline std::string license_texts() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/share/common-licenses"))
    if (entry.is_regular_file() && !entry.is_symlink()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    text += bytes.str();
  }
  REQUIRE(text.size() > 200'000);
  return text;
}

}  // namespace odbatch::test
