#pragma once
// What the stage tests' flips do to an image: mirror it left to right, in place.
#include <cstddef>
#include <utility>

#include "odbatch/stage/stage.hpp"

namespace odbatch::test {

inline void mirror_left_right(StageSampleImage& image) {
  for (std::uint32_t y = 0; y < image.height; ++y) {
    auto* row = image.rgb.data() + std::size_t{y} * image.width * 3;
    for (std::uint32_t l = 0, r = image.width - 1; l < r; ++l, --r)
      for (int c = 0; c < 3; ++c) std::swap(row[l * 3 + c], row[r * 3 + c]);
  }
}

}  // namespace odbatch::test
