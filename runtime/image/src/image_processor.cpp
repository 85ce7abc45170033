#include "odbatch/image/image_processor.hpp"

#include <stdexcept>
#include <string>
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
  DecodedImage out;
  if (auto error = process(image, out)) return std::move(*error);
  return out;
}

std::optional<ImageError> ImageProcessor::process(std::span<const std::uint8_t> image,
                                                  DecodedImage& out,
                                                  const std::optional<ImageCrop>& crop) {
  std::vector<std::uint8_t> rgb = std::move(out.rgb);
  PatchValueBytes patch_values = std::move(out.patch_values);
  out = DecodedImage{};
  if (!writer_) {
    out.rgb = std::move(rgb);
    return decoder_.decode(image, geometry_, out, nullptr, crop);
  }
  out.patch_values = std::move(patch_values);
  out.dtype = writer_->dtype();
  out.values_per_patch = writer_->values_per_patch();
  PixelValuesSink sink(*writer_, out);
  return decoder_.decode(image, geometry_, out, &sink, crop);
}

void ImageProcessor::PixelValuesSink::begin(std::uint32_t width, std::uint32_t height) {
  image_.patch_values.resize(writer_.bytes_for(width, height));
}

void ImageProcessor::PixelValuesSink::band(const std::uint8_t* rgb, std::uint32_t first_row,
                                           std::uint32_t rows) {
  // Resized sides are multiples of a block row (smart_resize), so every band is one whole.
  const std::uint32_t block_rows = writer_.block_rows();
  if (rows != block_rows || first_row % block_rows != 0)
    throw std::logic_error("pixel_values: a band of " + std::to_string(rows) + " rows at row " +
                           std::to_string(first_row) + " is not one block row of " +
                           std::to_string(block_rows));
  writer_.write_block_row(rgb, image_.width, image_.height, first_row / block_rows,
                          image_.patch_values);
}

}  // namespace odbatch
