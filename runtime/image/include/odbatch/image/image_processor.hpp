#pragma once
// What an image-decoder worker does to one image: decode and resize to the visual-token geometry
// (ImageDecoder: JPEG, PNG or WebP, told by the bytes), then, when the config asks for float32 or
// bfloat16, make Qwen2-VL's pixel_values from the resized pixels (PixelValuesWriter), so the
// trainer's thread receives model-ready tensors.
#include <cstdint>
#include <optional>
#include <span>

#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/pixel_values_writer.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// One per thread, like the ImageDecoder it owns. The uint8 resize is made in a buffer reused from
// image to image, so an image's one allocation is the DecodedImage's pixel buffer.
class ImageProcessor {
 public:
  // Throws ConfigError for invalid limits, geometry or pixel_values settings.
  ImageProcessor(const JpegDecoderLimits& limits, const VisionGeometryConfig& geometry,
                 const PixelValuesConfig& pixel_values);

  // uint8: `rgb` filled as ImageDecoder::decode fills it. float32 or bfloat16: `patch_values`
  // and `values_per_patch` filled, `rgb` empty. Bad data comes back as an ImageError.
  ImageResult<DecodedImage> process(std::span<const std::uint8_t> image);

 private:
  VisionGeometryConfig geometry_;
  ImageDecoder decoder_;
  std::optional<PixelValuesWriter> writer_;  // none for uint8
  DecodedImage resized_;
};

}  // namespace odbatch
