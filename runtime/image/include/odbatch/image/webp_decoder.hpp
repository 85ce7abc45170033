#pragma once
// WebP decoding with libwebp (kept out of this header), to the pixels Pillow's
// Image.open(...).convert("RGB") gives, then resized to the visual-token geometry like a JPEG.
//
// Pillow parity (Pillow 9.4 decodes WebP with the same Debian libwebp, through its animation
// decoder):
// - Lossless: the exact stored pixels. Lossy: libwebp's own YUV to RGB conversion (with its
//   "fancy" upsampling), the same bytes Pillow gets from the same library.
// - Alpha: dropped, not composited; the RGB under it is whatever libwebp decodes.
// - Animated WebP: the first frame on its canvas, as libwebp's animation decoder draws it
//   (outside the frame, black), which is what Pillow's Image.open() shows; rejected as
//   `unsupported` instead when JpegDecoderLimits::reject_animated is set.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/jpeg_decoder_limits.hpp"
#include "odbatch/image/rgb_band_sink.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

struct WebpHeader {
  std::uint32_t width = 0;  // the canvas, for an animation
  std::uint32_t height = 0;
  std::uint32_t components = 3;  // channels decoded before resizing: always RGB
  bool has_alpha = false;
  bool lossless = false;     // VP8L; false for lossy (VP8) and for an animation
  bool animation = false;    // an ANIM container, decoded by libwebp's animation decoder
  std::uint32_t frames = 1;  // an animation's frame count; 1 for a still image

  friend bool operator==(const WebpHeader&, const WebpHeader&) = default;
};

// One per thread: it keeps scratch buffers and is not thread-safe. Bad data never throws: every
// failure comes back as an ImageError. Only construction (invalid limits: ConfigError) and
// memory exhaustion (std::bad_alloc) throw.
class WebpDecoder {
 public:
  explicit WebpDecoder(const JpegDecoderLimits& limits = {});

  // libwebp's WebPGetFeatures (the RIFF and VP8/VP8L/VP8X headers), and for an animation the
  // frame count from its chunks, without decoding pixels. It succeeds exactly when the header
  // is valid and within the limits.
  ImageResult<WebpHeader> read_header(std::span<const std::uint8_t> webp);

  ImageResult<DecodedImage> decode(std::span<const std::uint8_t> webp,
                                   const VisionGeometryConfig& geometry);

  // Decodes into `out`, reusing its pixel vector's capacity. On error `out` is left
  // unspecified. Throws ConfigError for an invalid geometry config.
  // With a `sink`, the resized RGB goes to it band by band and out.rgb stays empty.
  std::optional<ImageError> decode(std::span<const std::uint8_t> webp,
                                   const VisionGeometryConfig& geometry, DecodedImage& out,
                                   RgbBandSink* sink = nullptr,
                                   const std::optional<ImageCrop>& crop = std::nullopt);

 private:
  std::optional<ImageError> decode_first_frame(std::span<const std::uint8_t> webp,
                                               const WebpHeader& header, std::uint8_t* rgb);

  JpegDecoderLimits limits_;
  std::vector<std::uint8_t> decoded_;  // full-size RGB
  BicubicResampler resampler_;
};

}  // namespace odbatch
