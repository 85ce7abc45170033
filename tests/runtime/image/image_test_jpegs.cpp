#include "image_test_jpegs.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace odbatch::test {
namespace {

int tj_subsampling(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444:
      return TJSAMP_444;
    case ChromaSubsampling::s422:
      return TJSAMP_422;
    case ChromaSubsampling::s420:
      return TJSAMP_420;
    case ChromaSubsampling::grey:
      return TJSAMP_GRAY;
    case ChromaSubsampling::s440:
      return TJSAMP_440;
    case ChromaSubsampling::s411:
      return TJSAMP_411;
  }
  throw std::invalid_argument("unknown subsampling");
}

Bytes compress(const std::uint8_t* pixels, std::uint32_t width, std::uint32_t height,
               int pixel_format, int subsampling, int quality) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), tjDestroy);
  if (!handle) throw std::runtime_error("tjInitCompress failed");
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  if (tjCompress2(handle.get(), pixels, static_cast<int>(width), 0, static_cast<int>(height),
                  pixel_format, &jpeg, &size, subsampling, quality, 0) != 0) {
    const std::string said = tjGetErrorStr2(handle.get());
    tjFree(jpeg);
    throw std::runtime_error("tjCompress2: " + said);
  }
  Bytes bytes(jpeg, jpeg + size);
  tjFree(jpeg);
  return bytes;
}

std::uint16_t segment_length(const Bytes& jpeg, std::size_t marker) {
  return static_cast<std::uint16_t>(jpeg.at(marker + 2) << 8 | jpeg.at(marker + 3));
}

// Offset of the first marker segment whose type satisfies `wanted`.
template <class Predicate>
std::size_t find_segment(const Bytes& jpeg, Predicate wanted) {
  std::size_t at = 2;  // after SOI
  while (at + 4 <= jpeg.size() && jpeg[at] == 0xFF) {
    if (wanted(jpeg[at + 1])) return at;
    at += 2 + segment_length(jpeg, at);
  }
  throw std::runtime_error("marker segment not found");
}

}  // namespace

Bytes constant_rgb(std::uint32_t width, std::uint32_t height, std::uint8_t r, std::uint8_t g,
                   std::uint8_t b) {
  Bytes rgb(std::size_t{width} * height * 3);
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = r;
    rgb[i + 1] = g;
    rgb[i + 2] = b;
  }
  return rgb;
}

Bytes horizontal_ramp_rgb(std::uint32_t width, std::uint32_t height) {
  Bytes rgb(std::size_t{width} * height * 3);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x) {
      const auto level = static_cast<std::uint8_t>(width > 1 ? x * 255 / (width - 1) : 0);
      for (std::uint32_t c = 0; c < 3; ++c) rgb[(std::size_t{y} * width + x) * 3 + c] = level;
    }
  return rgb;
}

Bytes pattern_rgb(std::uint32_t width, std::uint32_t height) {
  Bytes rgb(std::size_t{width} * height * 3);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x) {
      std::uint8_t* pixel = &rgb[(std::size_t{y} * width + x) * 3];
      const bool dark_square = ((x / 16) + (y / 16)) % 2 == 0;
      pixel[0] = static_cast<std::uint8_t>(std::uint64_t{x} * 255 / std::max(1u, width - 1));
      pixel[1] = static_cast<std::uint8_t>(std::uint64_t{y} * 255 / std::max(1u, height - 1));
      pixel[2] = dark_square ? 40 : 200;
    }
  return rgb;
}

Bytes encode_jpeg(const Bytes& rgb, std::uint32_t width, std::uint32_t height,
                  ChromaSubsampling subsampling, int quality) {
  if (rgb.size() != std::size_t{width} * height * 3)
    throw std::invalid_argument("encode_jpeg: pixel count does not match the size");
  return compress(rgb.data(), width, height, TJPF_RGB, tj_subsampling(subsampling), quality);
}

Bytes encode_cmyk_jpeg(std::uint32_t width, std::uint32_t height) {
  const Bytes cmyk(std::size_t{width} * height * 4, 0x40);
  return compress(cmyk.data(), width, height, TJPF_CMYK, TJSAMP_444, 90);
}

Bytes pattern_jpeg(std::uint32_t width, std::uint32_t height, ChromaSubsampling subsampling) {
  return encode_jpeg(pattern_rgb(width, height), width, height, subsampling);
}

std::size_t frame_header_offset(const Bytes& jpeg) {
  // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC) which share the range.
  return find_segment(jpeg, [](std::uint8_t type) {
    return type >= 0xC0 && type <= 0xCF && type != 0xC4 && type != 0xC8 && type != 0xCC;
  });
}

Bytes with_declared_size(Bytes jpeg, std::uint16_t width, std::uint16_t height) {
  // Marker (2), length (2), precision (1), then height and width, big-endian.
  const std::size_t sof = frame_header_offset(jpeg);
  jpeg.at(sof + 5) = static_cast<std::uint8_t>(height >> 8);
  jpeg.at(sof + 6) = static_cast<std::uint8_t>(height & 0xFF);
  jpeg.at(sof + 7) = static_cast<std::uint8_t>(width >> 8);
  jpeg.at(sof + 8) = static_cast<std::uint8_t>(width & 0xFF);
  return jpeg;
}

std::size_t scan_data_offset(const Bytes& jpeg) {
  const std::size_t sos = find_segment(jpeg, [](std::uint8_t type) { return type == 0xDA; });
  return sos + 2 + segment_length(jpeg, sos);
}

Bytes without_segment(Bytes jpeg, std::uint8_t type) {
  const std::size_t at = find_segment(jpeg, [type](std::uint8_t found) { return found == type; });
  const auto begin = jpeg.begin() + static_cast<std::ptrdiff_t>(at);
  jpeg.erase(begin, begin + 2 + segment_length(jpeg, at));
  return jpeg;
}

}  // namespace odbatch::test
