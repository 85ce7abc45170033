#include "odbatch/image/png_decoder.hpp"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "decoded_pixels.hpp"
#include "odbatch/core/config.hpp"

namespace odbatch {
namespace {

using image_detail::sides;

constexpr std::array<std::uint8_t, 8> kSignature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr std::size_t kChunkOverhead = 12;             // length, type, CRC
constexpr std::uint32_t kMaxPngInteger = 0x7FFF'FFFF;  // lengths and sides: 31 bits

std::uint32_t be32(const std::uint8_t* at) {
  return std::uint32_t{at[0]} << 24 | std::uint32_t{at[1]} << 16 | std::uint32_t{at[2]} << 8 |
         at[3];
}

bool is_type(const std::uint8_t* at, const char (&type)[5]) {
  return std::memcmp(at, type, 4) == 0;
}

bool valid_bit_depth(PngColorType type, std::uint8_t depth) {
  switch (type) {
    case PngColorType::grey:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case PngColorType::palette:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    case PngColorType::rgb:
    case PngColorType::grey_alpha:
    case PngColorType::rgba:
      return depth == 8 || depth == 16;
  }
  return false;
}

ImageError corrupt(std::string message) {
  return ImageError{ImageErrorKind::corrupt, "PNG " + std::move(message)};
}

// What libpng's callbacks share with the decoder: the input, how far libpng has read it, and
// its error message. Plain data, because libpng reports errors by longjmp.
struct PngReadState {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t offset = 0;
  char message[160] = {};
};

void read_bytes(png_structp png, png_bytep out, std::size_t count) {
  auto& state = *static_cast<PngReadState*>(png_get_io_ptr(png));
  if (count > state.size - state.offset) png_error(png, "the data ends early (truncated file)");
  std::memcpy(out, state.data + state.offset, count);
  state.offset += count;
}

[[noreturn]] void keep_error(png_structp png, png_const_charp message) {
  auto& state = *static_cast<PngReadState*>(png_get_error_ptr(png));
  std::snprintf(state.message, sizeof state.message, "%s", message);
  png_longjmp(png, 1);
}

// Warnings are libpng recovering (a bad ancillary chunk skipped, an unknown sRGB profile), as
// Pillow does: they do not reject the image.
void ignore_warning(png_structp, png_const_charp) {}

// The layout libpng is asked for: one byte per pixel for palette indices and grey, two for
// 16-bit grey (clipped afterwards), three for RGB.
bool is_grey16(const PngHeader& header) {
  return header.color_type == PngColorType::grey && header.bit_depth == 16;
}

std::size_t bytes_per_pixel(const PngHeader& header) {
  if (is_grey16(header)) return 2;
  return header.color_type == PngColorType::palette || header.components == 1 ? 1 : 3;
}

// Decodes the whole image into `rows` (height rows of width * bytes_per_pixel(header) bytes)
// and copies the palette into `palette` (256 RGB entries, left as they are past the PLTE's).
// False with state.message on any libpng error. Nothing here has a destructor: libpng's errors
// longjmp back to the setjmp below.
bool read_pixels(PngReadState& state, const PngHeader& header, const JpegDecoderLimits& limits,
                 std::uint8_t** rows, std::uint8_t* palette) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, keep_error, ignore_warning);
  if (png == nullptr) throw std::bad_alloc();
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    throw std::bad_alloc();
  }
  if (setjmp(png_jmpbuf(png)) != 0) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &state, read_bytes);
  // A bad CRC in any chunk libpng reads (those before and in the image data) is an error:
  // Pillow refuses a bad ancillary chunk before IDAT too, where libpng would only warn.
  png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
  png_set_user_limits(png, limits.max_source_side, limits.max_source_side);
  png_read_info(png, info);
  if (header.color_type == PngColorType::palette) {
    png_set_packing(png);  // indices below 8 bits to one byte each, looked up afterwards
  } else if (header.components == 1 && header.bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(png);  // spread to 0..255, as Pillow's "L;2" etc.
  } else if (header.bit_depth == 16 && header.color_type != PngColorType::grey) {
    png_set_strip_16(png);  // the high byte, as Pillow's "RGB;16B" etc.
  }
  png_set_strip_alpha(png);  // dropped, not composited, as convert("RGB") does
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != std::size_t{header.width} * bytes_per_pixel(header))
    png_error(png, "rows of an unexpected size after the transformations");
  png_read_image(png, rows);
  if (header.color_type == PngColorType::palette) {
    png_colorp entries = nullptr;
    int count = 0;
    if (png_get_PLTE(png, info, &entries, &count) == 0) png_error(png, "no PLTE chunk");
    for (int i = 0; i < std::min(count, 256); ++i) {
      palette[3 * i] = entries[i].red;
      palette[3 * i + 1] = entries[i].green;
      palette[3 * i + 2] = entries[i].blue;
    }
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

std::string_view to_string(PngColorType color_type) {
  switch (color_type) {
    case PngColorType::grey:
      return "grey";
    case PngColorType::rgb:
      return "RGB";
    case PngColorType::palette:
      return "palette";
    case PngColorType::grey_alpha:
      return "grey+alpha";
    case PngColorType::rgba:
      return "RGBA";
  }
  return "?";
}

PngDecoder::PngDecoder(const JpegDecoderLimits& limits) : limits_(limits) {
  validate(limits_);
}

ImageResult<PngHeader> PngDecoder::read_header(std::span<const std::uint8_t> png) {
  if (png.size() < kSignature.size() ||
      !std::equal(kSignature.begin(), kSignature.end(), png.begin()))
    return ImageError{ImageErrorKind::unsupported, "not a PNG: no PNG signature"};
  constexpr std::size_t kIhdrEnd = kSignature.size() + kChunkOverhead + 13;
  if (png.size() < kIhdrEnd)
    return corrupt("truncated in its IHDR chunk: " + std::to_string(png.size()) + " bytes");
  const std::uint8_t* ihdr = png.data() + kSignature.size();
  if (be32(ihdr) != 13 || !is_type(ihdr + 4, "IHDR"))
    return corrupt("does not start with a 13-byte IHDR chunk (byte 8)");
  const auto crc = static_cast<std::uint32_t>(crc32(0, ihdr + 4, 4 + 13));
  if (crc != be32(ihdr + 8 + 13)) return corrupt("IHDR chunk has a bad CRC (byte 8)");

  const std::uint8_t* fields = ihdr + 8;
  PngHeader header;
  header.width = be32(fields);
  header.height = be32(fields + 4);
  header.bit_depth = fields[8];
  header.color_type = static_cast<PngColorType>(fields[9]);
  if (header.width == 0 || header.height == 0 || header.width > kMaxPngInteger ||
      header.height > kMaxPngInteger)
    return corrupt("IHDR declares " + sides(header.width, header.height) + " pixels");
  const std::uint8_t type = fields[9];
  if ((type != 0 && type != 2 && type != 3 && type != 4 && type != 6) ||
      !valid_bit_depth(header.color_type, header.bit_depth))
    return corrupt("IHDR declares colour type " + std::to_string(type) + " at bit depth " +
                   std::to_string(header.bit_depth) + ", which PNG does not define");
  if (fields[10] != 0 || fields[11] != 0 || fields[12] > 1)
    return corrupt("IHDR declares compression " + std::to_string(fields[10]) + ", filter " +
                   std::to_string(fields[11]) + " and interlace " + std::to_string(fields[12]) +
                   ", which PNG does not define");
  header.interlaced = fields[12] == 1;
  header.components =
      header.color_type == PngColorType::grey || header.color_type == PngColorType::grey_alpha ? 1
                                                                                               : 3;
  if (auto error = image_detail::check_declared_size("PNG", header.width, header.height, limits_))
    return std::move(*error);

  // An APNG's acTL comes before the first IDAT; a walk that runs off the data stops here and
  // leaves the truncation to the decode.
  for (std::size_t at = kIhdrEnd; at + 8 <= png.size();) {
    const std::uint32_t length = be32(png.data() + at);
    const std::uint8_t* type_at = png.data() + at + 4;
    if (is_type(type_at, "IDAT") || length > kMaxPngInteger) break;
    if (is_type(type_at, "acTL") && length >= 8 && at + 16 <= png.size())
      header.frames = std::max<std::uint32_t>(1, be32(type_at + 4));
    at += kChunkOverhead + length;
  }
  if (header.frames > 1 && limits_.reject_animated)
    return ImageError{ImageErrorKind::unsupported,
                      "animated PNG with " + std::to_string(header.frames) +
                          " frames, and animated images are rejected (reject_animated)"};
  return header;
}

ImageResult<DecodedImage> PngDecoder::decode(std::span<const std::uint8_t> png,
                                             const VisionGeometryConfig& geometry) {
  DecodedImage image;
  if (auto error = decode(png, geometry, image)) return std::move(*error);
  return image;
}

std::optional<ImageError> PngDecoder::decode(std::span<const std::uint8_t> png,
                                             const VisionGeometryConfig& geometry,
                                             DecodedImage& out, RgbBandSink* sink,
                                             const std::optional<ImageCrop>& crop) {
  auto parsed = read_header(png);
  if (!parsed) return parsed.error();
  const PngHeader& header = parsed.value();
  if (crop)
    if (auto error = crop_problem(*crop, header.width, header.height)) return error;
  auto target = smart_resize(image_detail::kept_height(header.height, crop),
                             image_detail::kept_width(header.width, crop), geometry);
  if (!target) return target.error();
  image_detail::prepare(out, header.width, header.height, target.value(), sink, crop);

  // Palette indices are expanded to RGB in place, so their buffer holds three bytes a pixel.
  const std::size_t pixels = std::size_t{header.width} * header.height;
  const std::size_t row_bytes = header.width * bytes_per_pixel(header);
  const bool in_place = image_detail::decodes_in_place(out, header.components, sink);
  std::uint8_t* buffer = out.rgb.data();
  if (!in_place) {
    decoded_.resize(header.color_type == PngColorType::palette ? pixels * 3
                                                               : row_bytes * header.height);
    buffer = decoded_.data();
  }
  rows_.resize(header.height);
  for (std::uint32_t y = 0; y < header.height; ++y) rows_[y] = buffer + y * row_bytes;

  // Pillow's palette before PLTE's entries are copied over it: grey, (i, i, i).
  std::array<std::uint8_t, 256 * 3> palette;
  for (std::size_t i = 0; i < palette.size(); ++i) palette[i] = static_cast<std::uint8_t>(i / 3);
  PngReadState state;
  state.data = png.data();
  state.size = png.size();
  if (!read_pixels(state, header, limits_, rows_.data(), palette.data()))
    return corrupt("decoding failed at byte " + std::to_string(state.offset) + " of " +
                   std::to_string(png.size()) + ", libpng said: " + state.message);

  if (header.color_type == PngColorType::palette) {
    // Backwards, so that no index is overwritten before it is read (pixel i's RGB starts at 3i).
    for (std::size_t i = pixels; i-- > 0;) {
      const std::uint8_t* colour = palette.data() + 3 * std::size_t{buffer[i]};
      buffer[3 * i] = colour[0];
      buffer[3 * i + 1] = colour[1];
      buffer[3 * i + 2] = colour[2];
    }
  } else if (is_grey16(header)) {
    // Pillow's "I" to "RGB" clips; forwards, pixel i's byte is at or before its two.
    for (std::size_t i = 0; i < pixels; ++i) {
      const unsigned value = unsigned{buffer[2 * i]} << 8 | buffer[2 * i + 1];
      buffer[i] = static_cast<std::uint8_t>(std::min(value, 255u));
    }
  }
  if (crop) image_detail::crop_in_place(decoded_.data(), header.width, header.components, *crop);
  if (!in_place) image_detail::resize_into(resampler_, decoded_, header.components, out, sink);
  return std::nullopt;
}

}  // namespace odbatch
