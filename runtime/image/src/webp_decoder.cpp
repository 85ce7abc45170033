#include "odbatch/image/webp_decoder.hpp"

#include <webp/decode.h>
#include <webp/demux.h>

#include <algorithm>
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
struct IteratorReleaser {
  void operator()(WebPIterator* iterator) const { WebPDemuxReleaseIterator(iterator); }
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

  // The first frame as libwebp's animation decoder (and so Pillow) draws it: the first frame is
  // always a key frame, decoded onto a zeroed canvas at its offset, with no blending, and the
  // canvas's alpha is dropped. Drawn here straight into the RGB buffer, because the animation
  // decoder holds two RGBA canvases (8 bytes a canvas pixel, 512 MB for 8000x8000) besides it.
  const WebPData data{webp.data(), webp.size()};
  const std::unique_ptr<WebPDemuxer, DemuxDeleter> demuxer(WebPDemux(&data));
  if (!demuxer)
    return ImageError{ImageErrorKind::corrupt, "WebP animation's chunks cannot be parsed (" +
                                                   std::to_string(webp.size()) +
                                                   " bytes: truncated or damaged)"};
  WebPIterator frame;
  if (WebPDemuxGetFrame(demuxer.get(), 1, &frame) == 0)
    return ImageError{ImageErrorKind::corrupt, "WebP animation's first frame cannot be found (" +
                                                   std::to_string(webp.size()) + " bytes)"};
  const std::unique_ptr<WebPIterator, IteratorReleaser> frame_owner(&frame);
  // The demuxer accepts only frames inside the canvas, whose size the header check bounded.
  std::fill_n(rgb, pixels * 3, std::uint8_t{0});
  const std::size_t frame_start =
      (std::size_t(frame.y_offset) * header.width + std::size_t(frame.x_offset)) * 3;
  WebPDecoderConfig config;
  if (WebPInitDecoderConfig(&config) == 0) throw std::logic_error("libwebp version mismatch");
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgb + frame_start;
  config.output.u.RGBA.stride = static_cast<int>(header.width * 3);
  config.output.u.RGBA.size = pixels * 3 - frame_start;
  const VP8StatusCode status = WebPDecode(frame.fragment.bytes, frame.fragment.size, &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) return failure("decoding the first frame", status, webp.size());
  return std::nullopt;
}

}  // namespace odbatch
