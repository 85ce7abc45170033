#include "odbatch/image/image_decoder.hpp"

#include <utility>

namespace odbatch {
namespace {

template <class Header>
ImageResult<ImageHeader> to_image_header(ImageFormat format, ImageResult<Header> header,
                                         std::uint32_t frames) {
  if (!header) return header.error();
  return ImageHeader{format, header.value().width, header.value().height, header.value().components,
                     frames};
}

}  // namespace

ImageDecoder::ImageDecoder(const JpegDecoderLimits& limits)
    : jpeg_(limits), png_(limits), webp_(limits) {}

ImageResult<ImageHeader> ImageDecoder::read_header(std::span<const std::uint8_t> bytes) {
  const auto format = detect_image_format(bytes);
  if (!format) return format.error();
  switch (format.value()) {
    case ImageFormat::jpeg:
      return to_image_header(ImageFormat::jpeg, jpeg_.read_header(bytes), 1);
    case ImageFormat::png: {
      auto header = png_.read_header(bytes);
      const std::uint32_t frames = header ? header.value().frames : 1;
      return to_image_header(ImageFormat::png, std::move(header), frames);
    }
    case ImageFormat::webp: {
      auto header = webp_.read_header(bytes);
      const std::uint32_t frames = header ? header.value().frames : 1;
      return to_image_header(ImageFormat::webp, std::move(header), frames);
    }
  }
  return ImageError{ImageErrorKind::unsupported, "unknown image format"};
}

ImageResult<DecodedImage> ImageDecoder::decode(std::span<const std::uint8_t> bytes,
                                               const VisionGeometryConfig& geometry) {
  DecodedImage image;
  if (auto error = decode(bytes, geometry, image)) return std::move(*error);
  return image;
}

std::optional<ImageError> ImageDecoder::decode(std::span<const std::uint8_t> bytes,
                                               const VisionGeometryConfig& geometry,
                                               DecodedImage& out, RgbBandSink* sink,
                                               const std::optional<ImageCrop>& crop) {
  const auto format = detect_image_format(bytes);
  if (!format) return format.error();
  switch (format.value()) {
    case ImageFormat::jpeg:
      return jpeg_.decode(bytes, geometry, out, sink, crop);
    case ImageFormat::png:
      return png_.decode(bytes, geometry, out, sink, crop);
    case ImageFormat::webp:
      return webp_.decode(bytes, geometry, out, sink, crop);
  }
  return ImageError{ImageErrorKind::unsupported, "unknown image format"};
}

}  // namespace odbatch
