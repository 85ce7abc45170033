#include "odbatch/image/image_processor.hpp"

#include <utility>

namespace odbatch {

ImageProcessor::ImageProcessor(const JpegDecoderLimits& limits,
                               const VisionGeometryConfig& geometry,
                               const PixelValuesConfig& pixel_values)
    : geometry_(geometry), decoder_(limits) {
  validate(geometry_);
  validate(pixel_values);
  if (pixel_values.dtype != PixelDtype::uint8) writer_.emplace(pixel_values, geometry_);
}

ImageResult<DecodedImage> ImageProcessor::process(std::span<const std::uint8_t> image) {
  if (!writer_) return decoder_.decode(image, geometry_);
  if (auto error = decoder_.decode(image, geometry_, resized_)) return std::move(*error);
  DecodedImage out;
  out.grid = resized_.grid;
  out.width = resized_.width;
  out.height = resized_.height;
  out.source_width = resized_.source_width;
  out.source_height = resized_.source_height;
  out.decoded_width = resized_.decoded_width;
  out.decoded_height = resized_.decoded_height;
  out.dct_scale = resized_.dct_scale;
  out.dtype = writer_->dtype();
  out.values_per_patch = writer_->values_per_patch();
  out.patch_values.resize(writer_->bytes_for(out.width, out.height));
  writer_->write(resized_.rgb, out.width, out.height, out.patch_values);
  return out;
}

}  // namespace odbatch
