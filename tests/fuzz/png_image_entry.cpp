// A PNG file as the pipeline takes it (ImageDecoder, default limits), and the same bytes with
// every chunk's CRC made right, so that mutations reach libpng's decoding instead of stopping
// at its CRC check.
#include <cstdint>
#include <vector>

#include "image_decoder_contract.hpp"

#include <zlib.h>

namespace odbatch::fuzz {
namespace {

std::uint32_t be32(const std::vector<std::uint8_t>& bytes, std::size_t at) {
  return std::uint32_t{bytes[at]} << 24 | std::uint32_t{bytes[at + 1]} << 16 |
         std::uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
}

std::vector<std::uint8_t> with_right_crcs(Input input) {
  std::vector<std::uint8_t> png(input.begin(), input.end());
  for (std::size_t at = 8; at + 12 <= png.size();) {
    const std::uint32_t length = be32(png, at);
    if (length > png.size() - at - 12) break;
    const auto crc = static_cast<std::uint32_t>(crc32(0, png.data() + at + 4, length + 4));
    for (int i = 0; i < 4; ++i)
      png[at + 8 + length + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
    at += 12 + std::size_t{length};
  }
  return png;
}

}  // namespace

Outcome png_image(Input input) {
  const Outcome as_is = check_image_decoder("png_image", input);
  const auto fixed = with_right_crcs(input);
  const Outcome repaired = check_image_decoder("png_image", fixed);
  return as_is == Outcome::accepted || repaired == Outcome::accepted ? Outcome::accepted
                                                                     : Outcome::rejected;
}

}  // namespace odbatch::fuzz
