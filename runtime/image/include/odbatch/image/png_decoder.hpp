#pragma once
// PNG decoding with libpng (kept out of this header), to the pixels Pillow's
// Image.open(...).convert("RGB") gives, then resized to the visual-token geometry like a JPEG.
//
// Pillow parity, mode by mode (Pillow 9.4 checked):
// - RGB, and grey (1, 2, 4, 8 bits; grey values spread to 0..255): as stored. Grey comes out
//   as RGB with equal channels (resized as one channel, which gives the same pixels).
// - Alpha (RGBA, grey+alpha): dropped, not composited over any background; so is tRNS.
// - Palette: each index's PLTE colour; an index past the PLTE's entries is Pillow's default
//   palette entry, grey (i, i, i).
// - 16-bit RGB, RGBA and grey+alpha: the high byte of each sample (Pillow's "RGB;16B" etc.).
// - 16-bit grey: Pillow opens it as mode "I" and convert("RGB") clips, so a sample is
//   min(value, 255): most 16-bit grey photos come out nearly white, exactly as a Hugging Face
//   processor sees them.
// - Interlaced (Adam7) images decode to the same pixels. gAMA, cHRM, sRGB and iCCP are ignored,
//   as Pillow's conversion ignores them.
// - Animated PNG (APNG): the default image (IDAT), which is Pillow's first frame; rejected as
//   `unsupported` instead when JpegDecoderLimits::reject_animated is set.
//
// Strictness: a CRC error in any chunk read (Pillow refuses a bad ancillary chunk before the
// image data too; it skips the image data's own CRCs, which libpng checks), a truncated file
// and bad zlib data reject the image as corrupt, with the byte libpng had read up to. libpng's
// warnings (e.g. an unknown sRGB profile) do not.
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

// IHDR's colour types, numbered as PNG numbers them.
enum class PngColorType : std::uint8_t { grey = 0, rgb = 2, palette = 3, grey_alpha = 4, rgba = 6 };

std::string_view to_string(PngColorType color_type);  // "grey", "RGB", "palette", ...

struct PngHeader {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;  // channels decoded before resizing: 1 for grey, 3 otherwise
  std::uint8_t bit_depth = 8;
  PngColorType color_type = PngColorType::rgb;
  bool interlaced = false;
  std::uint32_t frames = 1;  // an APNG's acTL frame count; 1 for a still PNG

  friend bool operator==(const PngHeader&, const PngHeader&) = default;
};

// One per thread: it keeps scratch buffers and is not thread-safe. Bad data never throws: every
// failure comes back as an ImageError. Only construction (invalid limits: ConfigError) and
// memory exhaustion (std::bad_alloc) throw.
class PngDecoder {
 public:
  explicit PngDecoder(const JpegDecoderLimits& limits = {});

  // The signature, IHDR (checked against its CRC) and the chunk headers before the image data
  // (for an acTL), without decompressing anything. It succeeds exactly when the header is
  // valid and within the limits.
  ImageResult<PngHeader> read_header(std::span<const std::uint8_t> png);

  ImageResult<DecodedImage> decode(std::span<const std::uint8_t> png,
                                   const VisionGeometryConfig& geometry);

  // Decodes into `out`, reusing its pixel vector's capacity. On error `out` is left
  // unspecified. Throws ConfigError for an invalid geometry config.
  // With a `sink`, the resized RGB goes to it band by band and out.rgb stays empty.
  std::optional<ImageError> decode(std::span<const std::uint8_t> png,
                                   const VisionGeometryConfig& geometry, DecodedImage& out,
                                   RgbBandSink* sink = nullptr,
                                   const std::optional<ImageCrop>& crop = std::nullopt);

 private:
  JpegDecoderLimits limits_;
  std::vector<std::uint8_t> decoded_;  // full-size pixels as libpng writes them
  std::vector<std::uint8_t*> rows_;    // libpng's row pointers into decoded_ or the output
  BicubicResampler resampler_;
};

}  // namespace odbatch
