#pragma once
// What an image-decoder worker does to one image: decode and resize to the visual-token geometry
// (ImageDecoder: JPEG, PNG or WebP, told by the bytes), and, when the config asks for float32 or
// bfloat16, make Qwen2-VL's pixel_values (PixelValuesWriter), so the trainer's thread receives
// model-ready tensors. The values are written from the resize's rows a block row at a time, while
// they are in cache: no resized uint8 image is made on the way.
#include <cstdint>
#include <optional>
#include <span>

#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/pixel_values_writer.hpp"
#include "odbatch/image/rgb_band_sink.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// One per thread, like the ImageDecoder it owns. An image's one buffer is the DecodedImage's
// (uint8 RGB or pixel_values), allocated here or reused from an earlier image.
class ImageProcessor {
 public:
  // Throws ConfigError for invalid limits, geometry or pixel_values settings.
  ImageProcessor(const JpegDecoderLimits& limits, const VisionGeometryConfig& geometry,
                 const PixelValuesConfig& pixel_values);

  // uint8: `rgb` filled as ImageDecoder::decode fills it. float32 or bfloat16: `patch_values`
  // and `values_per_patch` filled, `rgb` empty. Bad data comes back as an ImageError.
  ImageResult<DecodedImage> process(std::span<const std::uint8_t> image);
  // The same into `out`, whose pixel buffers are reused (ImageBufferPool::take): their capacity
  // is kept and they are not cleared first. Every other field of `out` is overwritten. With a
  // `crop` (a record stage's), that rectangle of the full-size image is what is resized.
  std::optional<ImageError> process(std::span<const std::uint8_t> image, DecodedImage& out,
                                    const std::optional<ImageCrop>& crop = std::nullopt);

 private:
  // Hands the resize's block rows to the writer, into the image being made.
  class PixelValuesSink final : public RgbBandSink {
   public:
    PixelValuesSink(const PixelValuesWriter& writer, DecodedImage& image)
        : writer_(writer), image_(image) {}
    std::uint32_t band_rows() const override { return writer_.block_rows(); }
    void begin(std::uint32_t width, std::uint32_t height) override;
    void band(const std::uint8_t* rgb, std::uint32_t first_row, std::uint32_t rows) override;

   private:
    const PixelValuesWriter& writer_;
    DecodedImage& image_;
  };

  VisionGeometryConfig geometry_;
  ImageDecoder decoder_;
  std::optional<PixelValuesWriter> writer_;  // none for uint8
};

}  // namespace odbatch
