#pragma once
// JPEG decoding with libjpeg-turbo's TurboJPEG API, straight to the visual-token geometry.
//
// decode() reads the header, fixes the target size with smart_resize, decodes the whole image
// (or, with JpegDecoderLimits::jpeg_dct_scaling, at the smallest DCT scaling factor, 1/8 ... 7/8,
// whose scaled size still covers the target in both dimensions), then resizes to exactly the
// target with BicubicResampler (PIL's BICUBIC, antialiased). Grey JPEGs come out as RGB with
// equal channels (resized as one channel, which gives the same pixels). CMYK and YCCK JPEGs
// become the RGB Pillow's Image.open(...).convert("RGB") gives, byte for byte, before resizing:
// Pillow takes the samples as Adobe's inverted CMYK, whatever the APP14 marker says.
// By default the pixels are the Hugging Face processor's (Pillow's full decode and resize); a
// reduced DCT scale gives slightly other pixels, as PIL's Image.draft() does, with the same
// geometry and token count.
//
// Strictness: libjpeg-turbo's warnings (premature end of data, corrupt entropy segments, ...)
// mean it invented pixels, so they reject the image as corrupt, like its errors.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/image_error.hpp"
#include "odbatch/image/jpeg_decoder_limits.hpp"
#include "odbatch/image/rgb_band_sink.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

enum class ChromaSubsampling : std::uint8_t { s444, s422, s420, grey, s440, s411 };
enum class JpegColorspace : std::uint8_t { rgb, ycbcr, grey, cmyk, ycck };

std::string_view to_string(ChromaSubsampling subsampling);  // "4:4:4", ..., "grey"
std::string_view to_string(JpegColorspace colorspace);

struct JpegHeader {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;  // channels decoded before resizing: 1 for grey, 3 otherwise
  ChromaSubsampling subsampling = ChromaSubsampling::s444;
  JpegColorspace colorspace = JpegColorspace::ycbcr;

  friend bool operator==(const JpegHeader&, const JpegHeader&) = default;
};

// One per thread: it owns a TurboJPEG handle and scratch buffers and is not thread-safe.
// Bad data never throws: every failure comes back as an ImageError, and the handle is replaced
// after any failure because libjpeg-turbo's handle keeps failing on good files otherwise.
// Only construction (invalid limits: ConfigError) and memory exhaustion (std::bad_alloc) throw.
class JpegDecoder {
 public:
  explicit JpegDecoder(const JpegDecoderLimits& limits = {});
  ~JpegDecoder();
  JpegDecoder(JpegDecoder&& other) noexcept;
  JpegDecoder& operator=(JpegDecoder&& other) noexcept;
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // The header alone, in about a microsecond. It succeeds exactly when decode() would get past
  // the header: the limits hold.
  // smart_resize(header.height, header.width, geometry) then gives the token count decode()
  // will produce.
  ImageResult<JpegHeader> read_header(std::span<const std::uint8_t> jpeg);

  // Decodes into a new DecodedImage; its pixel vector is the only allocation in steady state.
  ImageResult<DecodedImage> decode(std::span<const std::uint8_t> jpeg,
                                   const VisionGeometryConfig& geometry);

  // Decodes into `out`, reusing its pixel vector's capacity, so a caller that recycles
  // DecodedImages decodes without allocating once buffers have grown. On error `out` is left
  // unspecified. Throws ConfigError for an invalid geometry config.
  // With a `sink`, the resized RGB goes to it band by band and out.rgb stays empty. With a
  // `crop`, the image is decoded at full size and that rectangle of it resized (a bad_geometry
  // error when it is not within the image).
  std::optional<ImageError> decode(std::span<const std::uint8_t> jpeg,
                                   const VisionGeometryConfig& geometry, DecodedImage& out,
                                   RgbBandSink* sink = nullptr,
                                   const std::optional<ImageCrop>& crop = std::nullopt);

 private:
  // `pixel_format` is a TJPF value: RGB, grey for one-component JPEGs, CMYK for four.
  std::optional<ImageError> decompress(std::span<const std::uint8_t> jpeg, std::uint32_t width,
                                       std::uint32_t height, int pixel_format,
                                       std::uint8_t* pixels);
  ImageError failure(std::string_view stage);  // libjpeg-turbo's message; replaces the handle

  JpegDecoderLimits limits_;
  void* handle_ = nullptr;  // tjhandle, kept opaque so turbojpeg.h stays out of this header
  std::vector<std::uint8_t> decoded_;  // the decode before resizing (CMYK: 4 bytes a pixel)
  BicubicResampler resampler_;
};

}  // namespace odbatch
