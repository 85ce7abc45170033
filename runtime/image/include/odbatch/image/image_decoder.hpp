#pragma once
// Any supported image (JPEG, PNG, WebP) to the visual-token geometry: the format is told by the
// bytes (detect_image_format), and the decoder for it does the work. Every format gives the same
// kind of DecodedImage: Pillow's convert("RGB") pixels, resized with Pillow's BICUBIC.
#include <cstdint>
#include <optional>
#include <span>

#include "odbatch/image/image_error.hpp"
#include "odbatch/image/image_format.hpp"
#include "odbatch/image/jpeg_decoder.hpp"
#include "odbatch/image/jpeg_decoder_limits.hpp"
#include "odbatch/image/png_decoder.hpp"
#include "odbatch/image/rgb_band_sink.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/image/webp_decoder.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// What every format's header read says, enough to fix the visual-token count early:
// smart_resize(height, width, geometry) gives the count decode() will produce.
struct ImageHeader {
  ImageFormat format = ImageFormat::jpeg;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;  // channels decoded before resizing: 1 for grey, 3 otherwise
  std::uint32_t frames = 1;      // more than 1 for an animated PNG or WebP

  friend bool operator==(const ImageHeader&, const ImageHeader&) = default;
};

// One per thread, like the decoders it owns. The limits apply to every format.
class ImageDecoder {
 public:
  // Throws ConfigError for invalid limits.
  explicit ImageDecoder(const JpegDecoderLimits& limits = {});

  // The format's cheap header read; an unknown format is `unsupported`, naming what it saw.
  ImageResult<ImageHeader> read_header(std::span<const std::uint8_t> bytes);

  ImageResult<DecodedImage> decode(std::span<const std::uint8_t> bytes,
                                   const VisionGeometryConfig& geometry);

  // Decodes into `out`, reusing its pixel vector's capacity. On error `out` is left
  // unspecified. Throws ConfigError for an invalid geometry config.
  // With a `sink`, the resized RGB goes to it band by band and out.rgb stays empty. With a
  // `crop`, that rectangle of the full-size image is what is resized.
  std::optional<ImageError> decode(std::span<const std::uint8_t> bytes,
                                   const VisionGeometryConfig& geometry, DecodedImage& out,
                                   RgbBandSink* sink = nullptr,
                                   const std::optional<ImageCrop>& crop = std::nullopt);

 private:
  JpegDecoder jpeg_;
  PngDecoder png_;
  WebpDecoder webp_;
};

}  // namespace odbatch
