#pragma once
// The dataset's file list from the paths and glob patterns a config names.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace odbatch {

// The largest "@list" file read: a million shard names fit many times over.
inline constexpr std::uint64_t kMaxDatasetListBytes = std::uint64_t{64} << 20;

// Expands each entry, keeping the entries' order: an entry "@list.txt" stands for the entries
// listed in that file (one per line; blank lines and "#" comments skipped; relative paths from
// the list's directory); braces expand as in a shell ("shard-{000..127}.tar", brace_expansion.hpp);
// then each path is expanded with POSIX glob(3), its matches sorted bytewise, so the result, and
// so every sample id, does not depend on the locale or the directory listing order. http(s)://
// URLs are kept as they are (no globbing). Throws DatasetError when the list is empty, when an
// entry matches nothing (naming the entry), or when two entries yield the same file (by
// canonical path, or the same URL).
std::vector<std::string> expand_dataset_paths(std::span<const std::string> paths_or_patterns);

}  // namespace odbatch
