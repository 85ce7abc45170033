#pragma once
// Real JPEGs for the image tests, made on the fly with TurboJPEG's compressor from synthetic
// pixels, so the tests need no image files.
#include <cstdint>
#include <vector>

#include "odbatch/image/jpeg_decoder.hpp"

namespace odbatch::test {

using Bytes = std::vector<std::uint8_t>;

// Packed RGB, row-major: every pixel `r, g, b`.
Bytes constant_rgb(std::uint32_t width, std::uint32_t height, std::uint8_t r, std::uint8_t g,
                   std::uint8_t b);
// Grey levels rising from 0 at the left edge to 255 at the right, the same on every row.
Bytes horizontal_ramp_rgb(std::uint32_t width, std::uint32_t height);
// A photo-like mix of smooth gradients and a checkerboard, different in each channel.
Bytes pattern_rgb(std::uint32_t width, std::uint32_t height);

// Compresses packed RGB; ChromaSubsampling::grey makes a one-component JPEG.
Bytes encode_jpeg(const Bytes& rgb, std::uint32_t width, std::uint32_t height,
                  ChromaSubsampling subsampling, int quality = 90);
// A CMYK JPEG (stored as YCCK) of the given size.
Bytes encode_cmyk_jpeg(std::uint32_t width, std::uint32_t height);

// Shorthand: pattern_rgb compressed at `subsampling`.
Bytes pattern_jpeg(std::uint32_t width, std::uint32_t height,
                   ChromaSubsampling subsampling = ChromaSubsampling::s420);

// Offset of the frame header (SOFn) segment's marker; throws when there is none.
std::size_t frame_header_offset(const Bytes& jpeg);
// The same JPEG with the frame header declaring another size, as a pixel bomb would.
Bytes with_declared_size(Bytes jpeg, std::uint16_t width, std::uint16_t height);
// Offset of the first byte of entropy-coded data (just after the SOS segment).
std::size_t scan_data_offset(const Bytes& jpeg);
// The same JPEG without its first marker segment of type `type` (e.g. 0xEE, Adobe's APP14).
Bytes without_segment(Bytes jpeg, std::uint8_t type);

}  // namespace odbatch::test
