#pragma once
// Which image format a file's bytes are, told by their magic bytes (never by the file's name):
// a PNG named .jpg is decoded as the PNG it is.
#include <cstdint>
#include <span>
#include <string_view>

#include "odbatch/image/image_error.hpp"

namespace odbatch {

enum class ImageFormat : std::uint8_t { jpeg, png, webp };

std::string_view to_string(ImageFormat format);  // "JPEG", "PNG", "WebP"

// JPEG: 0xFF 0xD8 (the SOI marker); PNG: its 8-byte signature; WebP: "RIFF", a size, "WEBP".
// Anything else is an `unsupported` error naming what the bytes look like (a GIF, a TIFF, ...)
// and their first bytes; no bytes at all are `corrupt`.
ImageResult<ImageFormat> detect_image_format(std::span<const std::uint8_t> bytes);

}  // namespace odbatch
