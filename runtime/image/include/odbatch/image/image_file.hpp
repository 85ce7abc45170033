#pragma once
// Reading an image file named by a dataset record, relative to the dataset's image root.
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/image_file_limits.hpp"

namespace odbatch {

// The bytes of `image_root / relative_path`. Errors name the full path:
// - bad_path: `relative_path` is empty, holds a NUL byte, is absolute, or leaves the root once
//   normalised ("a/../../b"); the check is lexical, so symbolic links inside the root are
//   followed wherever they point (datasets often link their image folders);
// - missing_file: nothing exists at the path;
// - unreadable: not a regular file, or opening or reading it failed (the system's reason);
// - pixel_bomb: the file is larger than limits.max_file_bytes.
ImageResult<std::vector<std::uint8_t>> read_image_file(const std::filesystem::path& image_root,
                                                       std::string_view relative_path,
                                                       const ImageFileLimits& limits = {});

}  // namespace odbatch
