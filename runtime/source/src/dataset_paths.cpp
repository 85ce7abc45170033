#include "odbatch/source/dataset_paths.hpp"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <system_error>

#include "odbatch/source/brace_expansion.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/open_byte_source.hpp"
#include "odbatch/source/regular_file.hpp"

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

// The entries of a shard list file: one per line, blank lines and "#" comments skipped, relative
// paths taken from the list's directory.
std::vector<std::string> list_file_entries(const std::string& list) {
  std::string text;
  try {
    text = read_regular_file(list, kMaxDatasetListBytes);
  } catch (const FileReadError& e) {
    throw DatasetError("dataset list '" + list + "': " + e.problem());
  }
  const auto directory = std::filesystem::path(list).parent_path();
  std::vector<std::string> entries;
  std::istringstream in(std::move(text));
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    std::string entry = line.substr(first, last - first + 1);
    if (!is_url(entry) && std::filesystem::path(entry).is_relative()) {
      entry = (directory / entry).string();
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) throw DatasetError("dataset list '" + list + "' names no file");
  return entries;
}

// An entry's files: a URL as it is, a path or glob pattern by glob(3).
std::vector<std::string> entry_files(const std::string& entry) {
  if (is_url(entry)) return {entry};
  return glob_sorted(entry);
}

}  // namespace

std::vector<std::string> expand_dataset_paths(std::span<const std::string> paths_or_patterns) {
  if (paths_or_patterns.empty()) throw DatasetError("no dataset files given");
  std::vector<std::string> entries;
  for (const auto& entry : paths_or_patterns) {
    if (entry.starts_with("@")) {
      for (const auto& listed : list_file_entries(entry.substr(1))) entries.push_back(listed);
    } else {
      entries.push_back(entry);
    }
  }
  std::vector<std::string> paths;
  std::map<std::string, std::string> seen;  // canonical path or URL -> first spelling
  for (const auto& entry : entries) {
    for (const auto& expanded : expand_braces(entry)) {
      for (auto& path : entry_files(expanded)) {
        std::string identity = path;
        if (!is_url(path)) {
          std::error_code error;
          identity = std::filesystem::weakly_canonical(path, error).string();
          if (error) throw DatasetError("dataset file '" + path + "': " + error.message());
        }
        const auto [previous, inserted] = seen.emplace(std::move(identity), path);
        if (!inserted) {
          throw DatasetError(
              "dataset file '" + path + "' (from '" + entry + "') is listed twice" +
              (previous->second == path ? "" : ", also as '" + previous->second + "'"));
        }
        paths.push_back(std::move(path));
      }
    }
  }
  return paths;
}

}  // namespace odbatch
