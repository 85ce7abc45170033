#include "odbatch/source/dataset_paths.hpp"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>

#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

bool has_glob_characters(std::string_view entry) {
  return entry.find_first_of("*?[") != std::string_view::npos;
}

// The first directory glob(3) could not read, so an unreadable directory is reported rather
// than skipped. glob's callback takes no context pointer, hence the thread-local.
thread_local std::string unreadable_directory;

int stop_at_unreadable_directory(const char* path, int error) {
  // A pattern's directory that does not exist simply matches nothing.
  if (error == ENOENT || error == ENOTDIR) return 0;
  unreadable_directory = std::string(path) + ": " + std::strerror(error);
  return 1;
}

// The matches of one entry, sorted bytewise (glob's own order follows LC_COLLATE).
std::vector<std::string> glob_sorted(const std::string& entry) {
  glob_t matches{};
  const int status = ::glob(entry.c_str(), GLOB_NOSORT, stop_at_unreadable_directory, &matches);
  std::vector<std::string> paths;
  if (status == 0) paths.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  ::globfree(&matches);
  if (status == GLOB_NOMATCH) {
    throw DatasetError(has_glob_characters(entry)
                           ? "dataset pattern '" + entry + "' matches no file"
                           : "dataset file '" + entry + "' does not exist");
  }
  if (status == GLOB_ABORTED) {
    throw DatasetError("dataset pattern '" + entry + "' could not be expanded: cannot read " +
                       unreadable_directory);
  }
  if (status != 0) {
    throw DatasetError("dataset pattern '" + entry + "' could not be expanded: out of memory");
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

std::vector<std::string> expand_dataset_paths(std::span<const std::string> paths_or_patterns) {
  if (paths_or_patterns.empty()) throw DatasetError("no dataset files given");
  std::vector<std::string> paths;
  std::map<std::filesystem::path, std::string> seen;  // canonical path -> first spelling
  for (const auto& entry : paths_or_patterns) {
    for (auto& path : glob_sorted(entry)) {
      std::error_code error;
      auto canonical = std::filesystem::weakly_canonical(path, error);
      if (error) throw DatasetError("dataset file '" + path + "': " + error.message());
      const auto [previous, inserted] = seen.emplace(std::move(canonical), path);
      if (!inserted) {
        throw DatasetError(
            "dataset file '" + path + "' (from '" + entry + "') is listed twice" +
            (previous->second == path ? "" : ", also as '" + previous->second + "'"));
      }
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

}  // namespace odbatch
