// Broken PNGs and WebPs, cut and patched from the fixture's real files (see
// image_png_webp_pillow_test.cpp): truncated files, bad CRCs, wrong magic bytes, pixel bombs and
// animated images when they are refused give located `corrupt`, `unsupported` or `pixel_bomb`
// errors, and thousands of mutations decode to an image or an error, never a crash.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "odbatch/core/split_mix64.hpp"
#include "odbatch/image/image_decoder.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

const std::string kPhoto = "00-2007_007763";

Bytes read_file(const std::string& variant) {
  const std::string path = ODBATCH_PNG_WEBP_CASES_DIR "/" + kPhoto + "." + variant;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::uint32_t be32(const Bytes& bytes, std::size_t at) {
  return std::uint32_t{bytes[at]} << 24 | std::uint32_t{bytes[at + 1]} << 16 |
         std::uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
}

void put_be32(Bytes& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(value >> (24 - 8 * i));
}

struct Chunk {
  std::size_t at = 0;  // its length field
  std::uint32_t length = 0;
  std::string type;
};

std::vector<Chunk> chunks_of(const Bytes& png) {
  std::vector<Chunk> chunks;
  for (std::size_t at = 8; at + 12 <= png.size();) {
    Chunk chunk{at, be32(png, at), std::string(png.begin() + at + 4, png.begin() + at + 8)};
    chunks.push_back(chunk);
    at += 12 + chunk.length;
  }
  return chunks;
}

void fix_crc(Bytes& png, const Chunk& chunk) {
  const std::size_t end = chunk.at + 8 + chunk.length;
  put_be32(png, end,
           static_cast<std::uint32_t>(crc32(0, png.data() + chunk.at + 4, chunk.length + 4)));
}

ImageError decode_error(ImageDecoder& decoder, const Bytes& bytes) {
  const auto decoded = decoder.decode(bytes, VisionGeometryConfig{});
  REQUIRE_MESSAGE(!decoded, "decoded " << bytes.size() << " bytes that should fail");
  return decoded.error();
}

std::size_t below(SplitMix64& rng, std::size_t bound) {
  return static_cast<std::size_t>(rng.next() % bound);
}

}  // namespace

TEST_CASE("a PNG cut anywhere before its image data ends is a located corrupt error") {
  ImageDecoder decoder;
  for (const char* variant : {"rgb.png", "interlaced.png", "p-trns.png", "grey16.png", "la.png"}) {
    CAPTURE(variant);
    const Bytes png = read_file(variant);
    std::size_t data_end = 0;
    for (const Chunk& chunk : chunks_of(png))
      if (chunk.type == "IDAT") data_end = chunk.at + 12 + chunk.length;
    REQUIRE(data_end > 0);
    for (std::size_t cut = 8; cut < data_end; cut += 1 + cut / 3) {
      CAPTURE(cut);
      const ImageError error = decode_error(decoder, Bytes(png.begin(), png.begin() + cut));
      CHECK(error.kind == ImageErrorKind::corrupt);
      CHECK(error.message.find("PNG") != std::string::npos);
    }
    // Past the data, only IEND is missing, which Pillow does not read either.
    CHECK(decoder.decode(Bytes(png.begin(), png.begin() + data_end), {}));
    const ImageError error = decode_error(decoder, Bytes(png.begin(), png.begin() + data_end - 1));
    CHECK(error.message.find("at byte") != std::string::npos);
  }
}

TEST_CASE("a WebP cut anywhere is a corrupt error") {
  ImageDecoder decoder;
  for (const char* variant : {"lossless.webp", "lossy.webp", "alpha.webp", "animated.webp"}) {
    CAPTURE(variant);
    const Bytes webp = read_file(variant);
    for (std::size_t cut = 12; cut < webp.size(); cut += 1 + cut / 3) {
      CAPTURE(cut);
      const ImageError error = decode_error(decoder, Bytes(webp.begin(), webp.begin() + cut));
      CHECK(error.kind == ImageErrorKind::corrupt);
      CHECK(error.message.find("WebP") != std::string::npos);
    }
  }
}

TEST_CASE("a bad CRC in a critical PNG chunk is corrupt, naming the chunk") {
  ImageDecoder decoder;
  const Bytes png = read_file("rgb.png");
  const auto chunks = chunks_of(png);
  Bytes bad_ihdr = png;
  bad_ihdr[chunks[0].at + 8 + 13] ^= 0x01;
  const ImageError ihdr = decode_error(decoder, bad_ihdr);
  CHECK(ihdr.kind == ImageErrorKind::corrupt);
  CHECK(ihdr.message == "PNG IHDR chunk has a bad CRC (byte 8)");
  CHECK(!decoder.read_header(bad_ihdr));

  const auto idat = std::find_if(chunks.begin(), chunks.end(),
                                 [](const Chunk& chunk) { return chunk.type == "IDAT"; });
  REQUIRE(idat != chunks.end());
  Bytes bad_idat = png;
  bad_idat[idat->at + 8 + idat->length / 2] ^= 0x10;
  CHECK(decoder.read_header(bad_idat));  // the header is fine; the data is not
  const ImageError data = decode_error(decoder, bad_idat);
  CHECK(data.kind == ImageErrorKind::corrupt);
  CHECK(data.message.find("IDAT: CRC error") != std::string::npos);

  // A bad CRC in an ancillary chunk before the image data: Pillow refuses the file, so does this.
  Bytes bad_text = png;
  const Bytes text = {0, 0, 0, 3, 't', 'E', 'X', 't', 'a', 0, 'b', 0, 0, 0, 0};
  bad_text.insert(bad_text.begin() + static_cast<std::ptrdiff_t>(idat->at), text.begin(),
                  text.end());
  const ImageError ancillary = decode_error(decoder, bad_text);
  CHECK(ancillary.kind == ImageErrorKind::corrupt);
  CHECK(ancillary.message.find("tEXt: CRC error") != std::string::npos);

  // With its CRC fixed, a damaged deflate stream is still caught: 0xFF as the first block
  // header (after zlib's two-byte header) declares the reserved block type 3.
  Bytes bad_deflate = png;
  bad_deflate[idat->at + 8 + 2] = 0xFF;
  fix_crc(bad_deflate, *idat);
  CHECK(decode_error(decoder, bad_deflate).kind == ImageErrorKind::corrupt);
}

TEST_CASE("bytes of no supported format are unsupported, naming what they look like") {
  ImageDecoder decoder;
  Bytes png = read_file("rgb.png");
  png[1] = 'Q';
  const ImageError wrong_magic = decode_error(decoder, png);
  CHECK(wrong_magic.kind == ImageErrorKind::unsupported);
  CHECK(wrong_magic.message ==
        "not a JPEG, PNG or WebP image, starts with 0x89 0x51 0x4E 0x47 0x0D 0x0A 0x1A 0x0A");
  const Bytes gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  CHECK(decode_error(decoder, gif).message ==
        "not a JPEG, PNG or WebP image: a GIF image, starts with 0x47 0x49 0x46 0x38 0x39 0x61 "
        "0x01 0x00");
  Bytes wave = read_file("lossy.webp");
  std::copy_n("WAVE", 4, wave.begin() + 8);
  CHECK(decode_error(decoder, wave).message.find("a RIFF file that is not WebP") !=
        std::string::npos);
  CHECK(decode_error(decoder, Bytes{}).kind == ImageErrorKind::corrupt);
  CHECK(decoder.read_header(read_file("rgb.png")).value().format == ImageFormat::png);
  CHECK(decoder.read_header(read_file("lossy.webp")).value().format == ImageFormat::webp);
}

TEST_CASE("PNG and WebP headers over the limits are pixel bombs, before any decoding") {
  Bytes png = read_file("rgb.png");
  const Chunk ihdr = chunks_of(png)[0];
  put_be32(png, ihdr.at + 8, 60000);
  put_be32(png, ihdr.at + 12, 60000);
  fix_crc(png, ihdr);
  ImageDecoder decoder;
  const auto header = decoder.read_header(png);
  REQUIRE(!header);
  CHECK(header.error().kind == ImageErrorKind::pixel_bomb);
  CHECK(header.error().message == "PNG declares 60000x60000, a side over 32768 pixels");
  put_be32(png, ihdr.at + 8, 30000);
  put_be32(png, ihdr.at + 12, 30000);
  fix_crc(png, ihdr);
  CHECK(decode_error(decoder, png).message ==
        "PNG declares 30000x30000 = 900000000 pixels, over the limit of 64000000");

  JpegDecoderLimits small;
  small.max_source_pixels = 10'000;
  ImageDecoder strict(small);
  for (const char* variant : {"lossless.webp", "lossy.webp", "animated.webp", "p.png"}) {
    CAPTURE(variant);
    const ImageError error = decode_error(strict, read_file(variant));
    CHECK(error.kind == ImageErrorKind::pixel_bomb);
    CHECK(error.message.find("over the limit of 10000") != std::string::npos);
  }
}

TEST_CASE("animated PNGs and WebPs: the first frame, or unsupported when refused") {
  ImageDecoder lenient;
  JpegDecoderLimits refusing;
  refusing.reject_animated = true;
  ImageDecoder strict(refusing);
  for (const std::string format : {"png", "webp"}) {
    CAPTURE(format);
    const Bytes animated = read_file("animated." + format);
    CHECK(lenient.read_header(animated).value().frames == 2);
    const auto first = lenient.decode(animated, {});
    REQUIRE(first);
    // The first frame is the photo itself, as the still variant stores it (lossless ones).
    if (format == "png")
      CHECK(first.value().rgb == lenient.decode(read_file("rgb.png"), {}).value().rgb);
    const ImageError error = decode_error(strict, animated);
    CHECK(error.kind == ImageErrorKind::unsupported);
    CHECK(error.message == "animated " + std::string(format == "png" ? "PNG" : "WebP") +
                               " with 2 frames, and animated images are rejected "
                               "(reject_animated)");
    CHECK(strict.decode(read_file(format == "png" ? "rgb.png" : "lossy.webp"), {}));
  }
}

namespace {

// A RIFF chunk: tag, little-endian size, data, and a pad byte to an even size.
void append_chunk(Bytes& out, std::string_view tag, const Bytes& data) {
  out.insert(out.end(), tag.begin(), tag.end());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(data.size() >> (8 * i)));
  out.insert(out.end(), data.begin(), data.end());
  if (data.size() % 2 != 0) out.push_back(0);
}

void append_le24(Bytes& out, std::uint32_t value) {
  for (int i = 0; i < 3; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

// An animated WebP of two frames on a `width` x `height` canvas, each frame one lossless pixel
// (R, G, B) = (200, 100, 50), the first at (x, y) (even numbers, as the format stores them).
Bytes tiny_animation(std::uint32_t width, std::uint32_t height, std::uint32_t x, std::uint32_t y) {
  // libwebp's WebPEncodeLosslessRGB of that pixel: the VP8L chunk's data.
  const Bytes pixel = {0x2f, 0x00, 0x00, 0x00, 0x00, 0x07, 0x50, 0xb2, 0x22,
                       0x57, 0xa6, 0xff, 0x81, 0x88, 0xe8, 0x7f, 0x00};
  Bytes body = {'W', 'E', 'B', 'P'};
  Bytes vp8x = {0x02, 0, 0, 0};  // the animation flag
  append_le24(vp8x, width - 1);
  append_le24(vp8x, height - 1);
  append_chunk(body, "VP8X", vp8x);
  append_chunk(body, "ANIM", Bytes(6, 0));
  for (const auto& [frame_x, frame_y] : {std::pair{x, y}, std::pair{0u, 0u}}) {
    Bytes frame;
    append_le24(frame, frame_x / 2);
    append_le24(frame, frame_y / 2);
    append_le24(frame, 0);    // width - 1
    append_le24(frame, 0);    // height - 1
    append_le24(frame, 100);  // duration in ms
    frame.push_back(0);
    append_chunk(frame, "VP8L", pixel);
    append_chunk(body, "ANMF", frame);
  }
  Bytes riff;
  append_chunk(riff, "RIFF", body);
  if (body.size() % 2 == 1) riff.pop_back();  // RIFF's size covers the body, unpadded
  return riff;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace

TEST_CASE("an animated WebP's first frame is drawn on a black canvas at its offset") {
  ImageDecoder decoder;
  const Bytes animation = tiny_animation(10, 6, 4, 2);
  const auto header = decoder.read_header(animation);
  REQUIRE(header);
  CHECK(header.value().frames == 2);
  VisionGeometryConfig geometry;
  geometry.min_pixels = 4;
  geometry.max_pixels = 4;
  geometry.patch_size = 1;
  geometry.merge_size = 2;
  DecodedImage image;
  REQUIRE_FALSE(decoder.decode(animation, geometry, image, nullptr, ImageCrop{4, 2, 2, 2}));
  // The crop's four pixels, resized 2x2 to 2x2: the frame's pixel and black.
  CHECK(image.rgb == Bytes{200, 100, 50, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("an animated WebP's canvas costs its RGB pixels, not the animation decoder's canvases") {
  // 166 bytes that declare a 4000x4000 canvas: libwebp's animation decoder would hold two RGBA
  // canvases (8 bytes a pixel) besides the RGB buffer; the documented bound is 4 bytes a pixel.
  const Bytes animation = tiny_animation(4000, 4000, 0, 0);
  CHECK(animation.size() < 200);
  ImageDecoder decoder;
  VisionGeometryConfig small;
  small.max_pixels = 64 * 28 * 28;
  const std::uint64_t before = peak_rss_bytes();
  const auto image = decoder.decode(animation, small);
  const std::uint64_t growth = peak_rss_bytes() - before;
  REQUIRE(image);
  CHECK(image.value().source_width == 4000);
  CHECK(growth <= std::uint64_t{4000} * 4000 * 4);
}

TEST_CASE("thousands of mutated PNGs and WebPs decode to an image or an error, never a crash") {
  ImageDecoder decoder;
  SplitMix64 rng(17);
  VisionGeometryConfig small;
  small.max_pixels = 64 * 28 * 28;
  int images = 0;
  int errors = 0;
  for (const char* variant : {"p-trns.png", "interlaced.png", "grey16.png", "lossless.webp",
                              "alpha.webp", "animated.webp", "animated.png"}) {
    const Bytes original = read_file(variant);
    for (int i = 0; i < 150; ++i) {
      Bytes bytes = original;
      // Mostly in the first kilobyte, where the headers and tables are.
      for (std::size_t m = 0, count = 1 + below(rng, 4); m < count; ++m) {
        const std::size_t span =
            below(rng, 2) == 0 ? std::min<std::size_t>(bytes.size(), 1024) : bytes.size();
        const std::size_t at = below(rng, span);
        if (below(rng, 3) == 0)
          bytes[at] = static_cast<std::uint8_t>(rng.next());
        else
          bytes[at] ^= static_cast<std::uint8_t>(1u << below(rng, 8));
      }
      if (decoder.decode(bytes, small))
        ++images;
      else
        ++errors;
    }
  }
  MESSAGE(images << " mutated files decoded, " << errors << " rejected");
  CHECK(errors > 0);
}

}  // namespace odbatch
