#include "odbatch/image/webp_decoder.hpp"

#include <webp/decode.h>
#include <webp/demux.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "decoded_pixels.hpp"
#include "odbatch/core/config.hpp"

namespace odbatch {
namespace {

std::string_view status_words(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OK:
      return "ok";
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "user abort";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "not enough data (truncated file)";
  }
  return "unknown status";
}

ImageError failure(std::string_view stage, VP8StatusCode status, std::size_t size) {
  if (status == VP8_STATUS_OUT_OF_MEMORY) throw std::bad_alloc();
  return ImageError{status == VP8_STATUS_UNSUPPORTED_FEATURE ? ImageErrorKind::unsupported
                                                             : ImageErrorKind::corrupt,
                    "WebP " + std::string(stage) + " failed (" + std::to_string(size) +
                        " bytes), libwebp said: " + std::string(status_words(status))};
}

struct DemuxDeleter {
  void operator()(WebPDemuxer* demuxer) const { WebPDemuxDelete(demuxer); }
};
struct AnimDecoderDeleter {
  void operator()(WebPAnimDecoder* decoder) const { WebPAnimDecoderDelete(decoder); }
};

}  // namespace

WebpDecoder::WebpDecoder(const JpegDecoderLimits& limits) : limits_(limits) {
  validate(limits_);
}

ImageResult<WebpHeader> WebpDecoder::read_header(std::span<const std::uint8_t> webp) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(webp.data(), webp.size(), &features);
  if (status != VP8_STATUS_OK) return failure("reading the header", status, webp.size());
  if (features.width <= 0 || features.height <= 0)
    return ImageError{ImageErrorKind::corrupt,
                      "WebP header declares " +
                          image_detail::sides(static_cast<std::uint32_t>(features.width),
                                              static_cast<std::uint32_t>(features.height)) +
                          " pixels"};
  WebpHeader header;
  header.width = static_cast<std::uint32_t>(features.width);
  header.height = static_cast<std::uint32_t>(features.height);
  header.has_alpha = features.has_alpha != 0;
  header.lossless = features.format == 2;
  if (auto error = image_detail::check_declared_size("WebP", header.width, header.height, limits_))
    return std::move(*error);
  header.animation = features.has_animation != 0;
  if (header.animation) {
    const WebPData data{webp.data(), webp.size()};
    const std::unique_ptr<WebPDemuxer, DemuxDeleter> demuxer(WebPDemux(&data));
    if (!demuxer)
      return ImageError{ImageErrorKind::corrupt, "WebP animation's chunks cannot be parsed (" +
                                                     std::to_string(webp.size()) +
                                                     " bytes: truncated or damaged)"};
    header.frames = WebPDemuxGetI(demuxer.get(), WEBP_FF_FRAME_COUNT);
    if (header.frames == 0)
      return ImageError{ImageErrorKind::corrupt, "WebP animation without frames"};
    if (header.frames > 1 && limits_.reject_animated)
      return ImageError{ImageErrorKind::unsupported,
                        "animated WebP with " + std::to_string(header.frames) +
                            " frames, and animated images are rejected (reject_animated)"};
  }
  return header;
}

ImageResult<DecodedImage> WebpDecoder::decode(std::span<const std::uint8_t> webp,
                                              const VisionGeometryConfig& geometry) {
  DecodedImage image;
  if (auto error = decode(webp, geometry, image)) return std::move(*error);
  return image;
}

std::optional<ImageError> WebpDecoder::decode(std::span<const std::uint8_t> webp,
                                              const VisionGeometryConfig& geometry,
                                              DecodedImage& out, RgbBandSink* sink,
                                              const std::optional<ImageCrop>& crop) {
  auto parsed = read_header(webp);
  if (!parsed) return parsed.error();
  const WebpHeader& header = parsed.value();
  if (crop)
    if (auto error = crop_problem(*crop, header.width, header.height)) return error;
  auto target = smart_resize(image_detail::kept_height(header.height, crop),
                             image_detail::kept_width(header.width, crop), geometry);
  if (!target) return target.error();
  image_detail::prepare(out, header.width, header.height, target.value(), sink, crop);
  const bool in_place = image_detail::decodes_in_place(out, 3, sink);
  if (!in_place) decoded_.resize(std::size_t{header.width} * header.height * 3);
  if (auto error = decode_first_frame(webp, header, in_place ? out.rgb.data() : decoded_.data()))
    return error;
  if (crop) image_detail::crop_in_place(decoded_.data(), header.width, 3, *crop);
  if (!in_place) image_detail::resize_into(resampler_, decoded_, 3, out, sink);
  return std::nullopt;
}

std::optional<ImageError> WebpDecoder::decode_first_frame(std::span<const std::uint8_t> webp,
                                                          const WebpHeader& header,
                                                          std::uint8_t* rgb) {
  const std::size_t pixels = std::size_t{header.width} * header.height;
  if (!header.animation) {
    WebPDecoderConfig config;
    if (WebPInitDecoderConfig(&config) == 0) throw std::logic_error("libwebp version mismatch");
    config.output.colorspace = MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = rgb;
    config.output.u.RGBA.stride = static_cast<int>(header.width * 3);
    config.output.u.RGBA.size = pixels * 3;
    const VP8StatusCode status = WebPDecode(webp.data(), webp.size(), &config);
    WebPFreeDecBuffer(&config.output);
    if (status != VP8_STATUS_OK) return failure("decoding", status, webp.size());
    return std::nullopt;
  }

  // libwebp's animation decoder draws the first frame on the zeroed canvas, as Pillow's does;
  // its canvas is RGBA, whose alpha is dropped.
  WebPAnimDecoderOptions options;
  if (WebPAnimDecoderOptionsInit(&options) == 0) throw std::logic_error("libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData data{webp.data(), webp.size()};
  const std::unique_ptr<WebPAnimDecoder, AnimDecoderDeleter> decoder(
      WebPAnimDecoderNew(&data, &options));
  if (!decoder)
    return ImageError{ImageErrorKind::corrupt, "WebP animation cannot be opened (" +
                                                   std::to_string(webp.size()) + " bytes)"};
  std::uint8_t* canvas = nullptr;
  int timestamp = 0;
  if (WebPAnimDecoderGetNext(decoder.get(), &canvas, &timestamp) == 0)
    return ImageError{ImageErrorKind::corrupt, "WebP animation's first frame cannot be decoded (" +
                                                   std::to_string(webp.size()) +
                                                   " bytes: truncated or damaged)"};
  for (std::size_t i = 0; i < pixels; ++i) {
    rgb[3 * i] = canvas[4 * i];
    rgb[3 * i + 1] = canvas[4 * i + 1];
    rgb[3 * i + 2] = canvas[4 * i + 2];
  }
  return std::nullopt;
}

}  // namespace odbatch
