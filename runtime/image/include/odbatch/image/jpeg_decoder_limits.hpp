#pragma once
// The JPEG decoder's limits, apart from JpegDecoder, so that a configuration holds them without
// the decoder.
#include <cstdint>

namespace odbatch {

// Pixel-bomb limits, checked against the header before anything is allocated.
struct JpegDecoderLimits {
  std::uint64_t max_source_pixels = 64'000'000;  // width * height as declared
  std::uint32_t max_source_side = 32'768;        // the longer side as declared

  friend bool operator==(const JpegDecoderLimits&, const JpegDecoderLimits&) = default;
};

// Throws ConfigError naming the first field that is zero.
void validate(const JpegDecoderLimits& limits);

}  // namespace odbatch
