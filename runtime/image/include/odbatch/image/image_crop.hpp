#pragma once
// Whether a crop (a record stage's rectangle of an image's source pixels) can be cut from an
// image of a given size.
#include <cstdint>
#include <optional>

#include "odbatch/image/image_error.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// A bad_geometry error, naming the crop and the size, unless the crop is a non-empty rectangle
// within a width x height image.
std::optional<ImageError> crop_problem(const ImageCrop& crop, std::uint32_t width,
                                       std::uint32_t height);

}  // namespace odbatch
