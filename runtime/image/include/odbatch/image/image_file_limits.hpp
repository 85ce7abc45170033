#pragma once
// The limits of reading an image file, apart from read_image_file, so that a configuration holds
// them without it.
#include <cstdint>

namespace odbatch {

struct ImageFileLimits {
  std::uint64_t max_file_bytes = std::uint64_t{64} << 20;  // 64 MiB

  friend bool operator==(const ImageFileLimits&, const ImageFileLimits&) = default;
};

// Throws ConfigError when max_file_bytes is zero.
void validate(const ImageFileLimits& limits);

}  // namespace odbatch
