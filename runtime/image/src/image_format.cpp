#include "odbatch/image/image_format.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

namespace odbatch {
namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::string_view prefix, std::size_t at = 0) {
  return bytes.size() >= at + prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at),
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; });
}

// Formats people put in image folders that no decoder here reads, so the error can name them.
std::string_view known_other_format(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, "GIF87a") || starts_with(bytes, "GIF89a")) return "a GIF image";
  if (starts_with(bytes, "BM")) return "a BMP image";
  if (starts_with(bytes, "II*\0") || starts_with(bytes, std::string_view("MM\0*", 4)))
    return "a TIFF image";
  if (starts_with(bytes, "ftyp", 4)) return "an ISO media file (AVIF, HEIC or MP4)";
  if (starts_with(bytes, "RIFF")) return "a RIFF file that is not WebP";
  if (starts_with(bytes, "<?xml") || starts_with(bytes, "<svg")) return "an SVG or XML document";
  if (starts_with(bytes, std::string_view("\0\0\0\x0CjP  ", 8))) return "a JPEG 2000 image";
  return "";
}

std::string first_bytes(std::span<const std::uint8_t> bytes) {
  std::string text;
  const std::size_t shown = std::min<std::size_t>(bytes.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%s0x%02X", i == 0 ? "" : " ", bytes[i]);
    text += hex;
  }
  return text;
}

}  // namespace

std::string_view to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::jpeg:
      return "JPEG";
    case ImageFormat::png:
      return "PNG";
    case ImageFormat::webp:
      return "WebP";
  }
  return "?";
}

ImageResult<ImageFormat> detect_image_format(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return ImageError{ImageErrorKind::corrupt, "empty data, not an image"};
  if (starts_with(bytes, "\xFF\xD8")) return ImageFormat::jpeg;
  if (starts_with(bytes, "\x89PNG\r\n\x1A\n")) return ImageFormat::png;
  if (starts_with(bytes, "RIFF") && starts_with(bytes, "WEBP", 8)) return ImageFormat::webp;
  const std::string_view other = known_other_format(bytes);
  return ImageError{ImageErrorKind::unsupported,
                    "not a JPEG, PNG or WebP image" +
                        (other.empty() ? std::string() : ": " + std::string(other)) +
                        ", starts with " + first_bytes(bytes)};
}

}  // namespace odbatch
