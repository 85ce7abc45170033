#pragma once
// What the PNG and WebP decoders share: the declared-size limits (worded like the JPEG
// decoder's) and the last step, full-size pixels resized into a DecodedImage.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/image_crop.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/jpeg_decoder_limits.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch::image_detail {

inline std::string sides(std::uint32_t width, std::uint32_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

// A pixel_bomb error when the declared size is over a limit.
inline std::optional<ImageError> check_declared_size(std::string_view format, std::uint32_t width,
                                                     std::uint32_t height,
                                                     const JpegDecoderLimits& limits) {
  if (std::max(width, height) > limits.max_source_side)
    return ImageError{ImageErrorKind::pixel_bomb,
                      std::string(format) + " declares " + sides(width, height) + ", a side over " +
                          std::to_string(limits.max_source_side) + " pixels"};
  const std::uint64_t pixels = std::uint64_t{width} * height;
  if (pixels > limits.max_source_pixels)
    return ImageError{ImageErrorKind::pixel_bomb,
                      std::string(format) + " declares " + sides(width, height) + " = " +
                          std::to_string(pixels) + " pixels, over the limit of " +
                          std::to_string(limits.max_source_pixels)};
  return std::nullopt;
}

// The size smart_resize sees: the crop's, or the image's.
inline std::uint32_t kept_width(std::uint32_t width, const std::optional<ImageCrop>& crop) {
  return crop ? crop->width : width;
}
inline std::uint32_t kept_height(std::uint32_t height, const std::optional<ImageCrop>& crop) {
  return crop ? crop->height : height;
}

// Moves the crop's rows of a full-size image (`width` pixels of `channels` bytes a row) to the
// buffer's start, packed: each row moves to or before where it was, so it works in place.
inline void crop_in_place(std::uint8_t* pixels, std::uint32_t width, std::uint32_t channels,
                          const ImageCrop& crop) {
  const std::size_t row = std::size_t{crop.width} * channels;
  for (std::uint32_t y = 0; y < crop.height; ++y)
    std::copy_n(pixels + ((std::size_t{crop.y} + y) * width + crop.x) * channels, row,
                pixels + y * row);
}

// Sets `out`'s sizes for a full-size decode (no DCT scaling) to `target`, of the `crop` when
// there is one, its RGB buffer sized unless the pixels go to a sink.
inline void prepare(DecodedImage& out, std::uint32_t width, std::uint32_t height,
                    const ResizeTarget& target, const RgbBandSink* sink,
                    const std::optional<ImageCrop>& crop = std::nullopt) {
  out.grid = target.grid;
  out.width = target.width;
  out.height = target.height;
  out.source_width = width;
  out.source_height = height;
  out.decoded_width = kept_width(width, crop);
  out.decoded_height = kept_height(height, crop);
  out.dct_scale = DctScale{};
  out.crop = crop;
  if (sink)
    out.rgb.clear();
  else
    out.rgb.resize(std::size_t{out.width} * out.height * 3);
}

// True when the full-size RGB pixels can be decoded straight into out.rgb.
inline bool decodes_in_place(const DecodedImage& out, std::uint32_t channels,
                             const RgbBandSink* sink) {
  return !sink && !out.crop && channels == 3 && out.decoded_width == out.width &&
         out.decoded_height == out.height;
}

// `pixels` (decoded_width x decoded_height, 1 or 3 channels) resized into out.rgb, or to `sink`
// when there is one; grey is resized as one channel and written to R, G and B, the pixels of its
// RGB conversion resized.
inline void resize_into(BicubicResampler& resampler, std::span<const std::uint8_t> pixels,
                        std::uint32_t channels, DecodedImage& out, RgbBandSink* sink) {
  const std::uint32_t width = out.decoded_width;
  const std::uint32_t height = out.decoded_height;
  if (sink) {
    resampler.resize_in_bands(pixels.first(std::size_t{width} * height * channels), width, height,
                              channels, out.width, out.height, *sink);
    return;
  }
  if (channels == 3) {
    if (width == out.width && height == out.height) {
      std::copy_n(pixels.begin(), out.rgb.size(), out.rgb.begin());
      return;
    }
    resampler.resize(pixels.first(std::size_t{width} * height * 3), width, height, out.rgb,
                     out.width, out.height);
    return;
  }
  const std::span<const std::uint8_t> grey = pixels.first(std::size_t{width} * height);
  if (width == out.width && height == out.height) {
    for (std::size_t i = 0; i < grey.size(); ++i)
      out.rgb[3 * i] = out.rgb[3 * i + 1] = out.rgb[3 * i + 2] = grey[i];
    return;
  }
  resampler.resize_grey_to_rgb(grey, width, height, out.rgb, out.width, out.height);
}

}  // namespace odbatch::image_detail
