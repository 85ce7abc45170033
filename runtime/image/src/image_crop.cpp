#include "odbatch/image/image_crop.hpp"

#include <string>

namespace odbatch {

std::optional<ImageError> crop_problem(const ImageCrop& crop, std::uint32_t width,
                                       std::uint32_t height) {
  if (crop.width > 0 && crop.height > 0 && crop.x < width && crop.y < height &&
      crop.width <= width - crop.x && crop.height <= height - crop.y)
    return std::nullopt;
  return ImageError{ImageErrorKind::bad_geometry,
                    "crop " + std::to_string(crop.width) + "x" + std::to_string(crop.height) +
                        " at (" + std::to_string(crop.x) + ", " + std::to_string(crop.y) +
                        ") is not within the " + std::to_string(width) + "x" +
                        std::to_string(height) + " image"};
}

}  // namespace odbatch
