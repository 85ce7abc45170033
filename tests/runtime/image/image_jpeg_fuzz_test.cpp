// Mutated real JPEGs: whatever the bytes, decoding returns an image or an error, never crashes
// or reads out of bounds (the sanitizer builds run this too).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "image_test_jpegs.hpp"
#include "odbatch/core/split_mix64.hpp"
#include "odbatch/image/jpeg_decoder.hpp"

namespace odbatch {
namespace {

using test::Bytes;

std::size_t below(SplitMix64& rng, std::size_t bound) {
  return static_cast<std::size_t>(rng.next() % bound);
}

// Mutations biased towards the header and table segments, where parsing decisions are made.
Bytes mutate(Bytes jpeg, SplitMix64& rng) {
  const std::size_t mutations = 1 + below(rng, 4);
  for (std::size_t m = 0; m < mutations && !jpeg.empty(); ++m) {
    const std::size_t span =
        below(rng, 2) == 0 ? std::min<std::size_t>(jpeg.size(), 700) : jpeg.size();
    const std::size_t at = below(rng, span);
    const auto value = static_cast<std::uint8_t>(rng.next());
    switch (below(rng, 6)) {
      case 0:  // flip one bit
        jpeg[at] ^= static_cast<std::uint8_t>(1u << below(rng, 8));
        break;
      case 1:  // overwrite one byte
        jpeg[at] = value;
        break;
      case 2:  // a marker prefix where there was none
        jpeg[at] = 0xFF;
        break;
      case 3:  // insert one byte
        jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(at), value);
        break;
      case 4:  // delete a short run
        jpeg.erase(jpeg.begin() + static_cast<std::ptrdiff_t>(at),
                   jpeg.begin() +
                       static_cast<std::ptrdiff_t>(std::min(jpeg.size(), at + 1 + below(rng, 16))));
        break;
      default:  // truncate
        jpeg.resize(at);
    }
  }
  return jpeg;
}

}  // namespace

TEST_CASE("thousands of mutated JPEGs decode to an image or an error, never a crash") {
  const std::vector<Bytes> originals = {
      test::pattern_jpeg(64, 48, ChromaSubsampling::s420),
      test::pattern_jpeg(97, 33, ChromaSubsampling::s444),
      test::pattern_jpeg(40, 120, ChromaSubsampling::grey),
      test::pattern_jpeg(300, 200, ChromaSubsampling::s422),
      test::encode_cmyk_jpeg(72, 56),
  };
  // A lower pixel limit keeps headers mutated into large sizes cheap to reject.
  JpegDecoder decoder({.max_source_pixels = 4'000'000, .max_source_side = 8192});
  DecodedImage recycled;
  SplitMix64 rng(0x1a9e5eed);
  int images = 0;
  int errors = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const Bytes& original = originals[static_cast<std::size_t>(iteration) % originals.size()];
    const Bytes jpeg = mutate(original, rng);
    const auto header = decoder.read_header(jpeg);
    const auto error = decoder.decode(jpeg, {}, recycled);
    if (error) {
      ++errors;
      REQUIRE_FALSE(error->message.empty());
      if (!header.ok()) REQUIRE(header.error().kind == error->kind);
      continue;
    }
    ++images;
    REQUIRE(header.ok());
    const auto target = smart_resize(header.value().height, header.value().width);
    REQUIRE(target.ok());
    REQUIRE(recycled.grid == target.value().grid);
    REQUIRE(recycled.rgb.size() == std::size_t{recycled.width} * recycled.height * 3);
  }
  MESSAGE(images << " mutated JPEGs decoded, " << errors << " rejected");
  // Both outcomes must occur, or the mutations are too weak or too strong to test anything.
  CHECK(images > 100);
  CHECK(errors > 100);
  for (const Bytes& original : originals) CHECK_FALSE(decoder.decode(original, {}, recycled));
}

TEST_CASE("random bytes behind a JPEG start marker are rejected") {
  JpegDecoder decoder;
  SplitMix64 rng(77);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Bytes bytes(2 + below(rng, 300));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next());
    bytes[0] = 0xFF;
    bytes[1] = 0xD8;
    REQUIRE_FALSE(decoder.decode(bytes, {}).ok());
  }
}

}  // namespace odbatch
