#pragma once
// The image decoders' limits (JPEG, PNG and WebP alike), apart from the decoders, so that a
// configuration holds them without them.
#include <cstdint>

namespace odbatch {

// Pixel-bomb limits, checked against the header before anything is allocated, what to do with
// animated images, and whether JPEGs may decode at a reduced DCT scale.
struct JpegDecoderLimits {
  std::uint64_t max_source_pixels = 64'000'000;  // width * height as declared
  std::uint32_t max_source_side = 32'768;        // the longer side as declared
  // An animated PNG or WebP (more than one frame) is decoded as its first frame, as Pillow's
  // Image.open() does, unless this rejects it as `unsupported`.
  bool reject_animated = false;
  // Decodes a JPEG at the smallest DCT scale (1/8 ... 7/8) that still covers its target size,
  // as Pillow's Image.draft() does: up to about a third less CPU for photos of many megapixels,
  // but the pixels then differ from the processor's (a full decode, then the resize), which the
  // model sees at inference (docs/images.md measures both). Off: pixels equal the processor's.
  bool jpeg_dct_scaling = false;

  friend bool operator==(const JpegDecoderLimits&, const JpegDecoderLimits&) = default;
};

// Throws ConfigError naming the first field that is zero.
void validate(const JpegDecoderLimits& limits);

}  // namespace odbatch
