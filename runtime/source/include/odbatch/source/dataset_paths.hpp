#pragma once
// The dataset's file list from the paths and glob patterns a config names.
#include <span>
#include <string>
#include <vector>

namespace odbatch {

// Expands each entry with POSIX glob(3) and sorts each entry's matches bytewise, keeping the
// entries' order: the result, and so every sample id, does not depend on the locale or on the
// directory listing order. Throws DatasetError when the list is empty, when an entry matches
// nothing (naming the entry), or when two entries yield the same file (by canonical path).
std::vector<std::string> expand_dataset_paths(std::span<const std::string> paths_or_patterns);

}  // namespace odbatch
