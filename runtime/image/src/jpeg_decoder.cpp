#include "odbatch/image/jpeg_decoder.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "decoded_pixels.hpp"

namespace odbatch {
namespace {

// The enums mirror TurboJPEG's numbering, so header values convert by a cast.
static_assert(static_cast<int>(ChromaSubsampling::s444) == TJSAMP_444 &&
              static_cast<int>(ChromaSubsampling::s422) == TJSAMP_422 &&
              static_cast<int>(ChromaSubsampling::s420) == TJSAMP_420 &&
              static_cast<int>(ChromaSubsampling::grey) == TJSAMP_GRAY &&
              static_cast<int>(ChromaSubsampling::s440) == TJSAMP_440 &&
              static_cast<int>(ChromaSubsampling::s411) == TJSAMP_411);
static_assert(static_cast<int>(JpegColorspace::rgb) == TJCS_RGB &&
              static_cast<int>(JpegColorspace::ycbcr) == TJCS_YCbCr &&
              static_cast<int>(JpegColorspace::grey) == TJCS_GRAY &&
              static_cast<int>(JpegColorspace::cmyk) == TJCS_CMYK &&
              static_cast<int>(JpegColorspace::ycck) == TJCS_YCCK);

tjhandle new_handle() {
  tjhandle handle = tjInitDecompress();
  // Creating a handle only allocates, so failing means memory is exhausted.
  if (handle == nullptr) throw std::bad_alloc();
  return handle;
}

// libjpeg-turbo's DCT scaling factors up to 1/1, smallest first.
const std::vector<DctScale>& reducing_scales() {
  static const std::vector<DctScale> scales = [] {
    int count = 0;
    const tjscalingfactor* factors = tjGetScalingFactors(&count);
    std::vector<DctScale> reducing;
    for (int i = 0; factors != nullptr && i < count; ++i)
      if (factors[i].num > 0 && factors[i].num <= factors[i].denom)
        reducing.push_back({static_cast<std::uint32_t>(factors[i].num),
                            static_cast<std::uint32_t>(factors[i].denom)});
    std::sort(reducing.begin(), reducing.end(), [](const DctScale& a, const DctScale& b) {
      return std::uint64_t{a.num} * b.den < std::uint64_t{b.num} * a.den;
    });
    return reducing;
  }();
  return scales;
}

// TJSCALED: the size libjpeg-turbo produces for `side` at `scale`.
std::uint32_t scaled(std::uint32_t side, DctScale scale) {
  return static_cast<std::uint32_t>((std::uint64_t{side} * scale.num + scale.den - 1) / scale.den);
}

DctScale covering_scale(const JpegHeader& header, const ResizeTarget& target) {
  for (const DctScale& scale : reducing_scales())
    if (scaled(header.width, scale) >= target.width &&
        scaled(header.height, scale) >= target.height)
      return scale;
  return DctScale{};
}

// Pillow's RGB for a four-component JPEG, which Hugging Face's image processors start from.
// Pillow reads every such JPEG as Adobe's inverted CMYK (rawmode "CMYK;I", whatever its APP14
// marker says): its C, M, Y and K are 255 minus the stored samples. convert("RGB") (cmyk2rgb)
// then gives each colour as (255 - K) - (255 - K) * ink / 255, rounded as its MULDIV255 rounds.
// 255 - K is the stored K ("white" here), and a colour never leaves 0..white: nothing to clamp.
// `rgb` may be `cmyk` itself: a pixel is read whole before its three bytes, which lie at or
// before its four, are written.
void cmyk_to_rgb(const std::uint8_t* cmyk, std::size_t pixels, std::uint8_t* rgb) {
  for (std::size_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const int white = cmyk[3];
    const int inks[3] = {255 - cmyk[0], 255 - cmyk[1], 255 - cmyk[2]};
    for (int c = 0; c < 3; ++c) {
      const int product = inks[c] * white + 128;
      rgb[c] = static_cast<std::uint8_t>(white - (((product >> 8) + product) >> 8));
    }
  }
}

std::string sides(std::uint32_t width, std::uint32_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

std::string first_bytes(std::span<const std::uint8_t> jpeg) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%02X 0x%02X", jpeg[0], jpeg[1]);
  return text;
}

}  // namespace

void validate(const JpegDecoderLimits& limits) {
  if (limits.max_source_pixels == 0) throw ConfigError("max_source_pixels", "must be positive");
  if (limits.max_source_side == 0) throw ConfigError("max_source_side", "must be positive");
}

std::string_view to_string(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444:
      return "4:4:4";
    case ChromaSubsampling::s422:
      return "4:2:2";
    case ChromaSubsampling::s420:
      return "4:2:0";
    case ChromaSubsampling::grey:
      return "grey";
    case ChromaSubsampling::s440:
      return "4:4:0";
    case ChromaSubsampling::s411:
      return "4:1:1";
  }
  return "?";
}

std::string_view to_string(JpegColorspace colorspace) {
  switch (colorspace) {
    case JpegColorspace::rgb:
      return "RGB";
    case JpegColorspace::ycbcr:
      return "YCbCr";
    case JpegColorspace::grey:
      return "grey";
    case JpegColorspace::cmyk:
      return "CMYK";
    case JpegColorspace::ycck:
      return "YCCK";
  }
  return "?";
}

JpegDecoder::JpegDecoder(const JpegDecoderLimits& limits) : limits_(limits) {
  validate(limits_);
  handle_ = new_handle();
}

JpegDecoder::~JpegDecoder() {
  if (handle_ != nullptr) tjDestroy(handle_);
}

JpegDecoder::JpegDecoder(JpegDecoder&& other) noexcept
    : limits_(other.limits_),
      handle_(std::exchange(other.handle_, nullptr)),
      decoded_(std::move(other.decoded_)),
      resampler_(std::move(other.resampler_)) {}

JpegDecoder& JpegDecoder::operator=(JpegDecoder&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) tjDestroy(handle_);
    limits_ = other.limits_;
    handle_ = std::exchange(other.handle_, nullptr);
    decoded_ = std::move(other.decoded_);
    resampler_ = std::move(other.resampler_);
  }
  return *this;
}

ImageError JpegDecoder::failure(std::string_view stage) {
  const std::string said = tjGetErrorStr2(handle_);
  tjDestroy(handle_);
  handle_ = nullptr;  // so that a throwing new_handle() leaves no dangling handle behind
  handle_ = new_handle();
  // libjpeg-turbo words every valid-but-unhandled feature this way (12-bit samples, unusual
  // sampling factors, colour conversions it lacks); everything else is damaged data. Its
  // warnings (truncated or corrupt data) count as damage too: decode() stops on them.
  const bool unsupported = said.find("Unsupported") != std::string::npos ||
                           said.find("Could not determine subsampling") != std::string::npos;
  return ImageError{unsupported ? ImageErrorKind::unsupported : ImageErrorKind::corrupt,
                    std::string(stage) + " failed, libjpeg-turbo said: " + said};
}

ImageResult<JpegHeader> JpegDecoder::read_header(std::span<const std::uint8_t> jpeg) {
  if (jpeg.empty()) return ImageError{ImageErrorKind::corrupt, "empty data, not a JPEG"};
  if (jpeg.size() < 2 || jpeg[0] != 0xFF || jpeg[1] != 0xD8)
    return ImageError{ImageErrorKind::unsupported,
                      jpeg.size() < 2 ? std::string("a single byte, not a JPEG")
                                      : "not a JPEG: starts with " + first_bytes(jpeg) +
                                            ", not the SOI marker 0xFF 0xD8"};
  int width = 0;
  int height = 0;
  int subsampling = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(handle_, jpeg.data(), jpeg.size(), &width, &height, &subsampling,
                          &colorspace) != 0)
    return failure("reading the JPEG header");
  if (width <= 0 || height <= 0)
    return ImageError{ImageErrorKind::corrupt, "JPEG header declares " + std::to_string(width) +
                                                   "x" + std::to_string(height) + " pixels"};
  if (subsampling < TJSAMP_444 || subsampling > TJSAMP_411 || colorspace < TJCS_RGB ||
      colorspace > TJCS_YCCK)
    return ImageError{ImageErrorKind::unsupported,
                      "JPEG header reports subsampling " + std::to_string(subsampling) +
                          " and colourspace " + std::to_string(colorspace) +
                          ", unknown to this decoder"};
  JpegHeader header;
  header.width = static_cast<std::uint32_t>(width);
  header.height = static_cast<std::uint32_t>(height);
  header.subsampling = static_cast<ChromaSubsampling>(subsampling);
  header.colorspace = static_cast<JpegColorspace>(colorspace);
  header.components = header.colorspace == JpegColorspace::grey ? 1 : 3;

  const std::uint32_t longer = std::max(header.width, header.height);
  if (longer > limits_.max_source_side)
    return ImageError{ImageErrorKind::pixel_bomb,
                      "JPEG declares " + sides(header.width, header.height) + ", a side over " +
                          std::to_string(limits_.max_source_side) + " pixels"};
  const std::uint64_t pixels = std::uint64_t{header.width} * header.height;
  if (pixels > limits_.max_source_pixels)
    return ImageError{ImageErrorKind::pixel_bomb,
                      "JPEG declares " + sides(header.width, header.height) + " = " +
                          std::to_string(pixels) + " pixels, over the limit of " +
                          std::to_string(limits_.max_source_pixels)};
  return header;
}

ImageResult<DecodedImage> JpegDecoder::decode(std::span<const std::uint8_t> jpeg,
                                              const VisionGeometryConfig& geometry) {
  DecodedImage image;
  if (auto error = decode(jpeg, geometry, image)) return std::move(*error);
  return image;
}

std::optional<ImageError> JpegDecoder::decode(std::span<const std::uint8_t> jpeg,
                                              const VisionGeometryConfig& geometry,
                                              DecodedImage& out, RgbBandSink* sink,
                                              const std::optional<ImageCrop>& crop) {
  auto header = read_header(jpeg);
  if (!header) return header.error();
  const std::uint32_t source_width = header.value().width;
  const std::uint32_t source_height = header.value().height;
  if (crop)
    if (auto error = crop_problem(*crop, source_width, source_height)) return error;
  auto target = smart_resize(image_detail::kept_height(source_height, crop),
                             image_detail::kept_width(source_width, crop), geometry);
  if (!target) return target.error();

  // A crop is cut from the full-size image: its sides need not be multiples of a DCT scale.
  const DctScale scale = crop || !limits_.jpeg_dct_scaling
                             ? DctScale{}
                             : covering_scale(header.value(), target.value());
  out.grid = target.value().grid;
  out.width = target.value().width;
  out.height = target.value().height;
  out.source_width = source_width;
  out.source_height = source_height;
  // What libjpeg-turbo decodes, and (after the crop) what is resized.
  const std::uint32_t full_width = scaled(source_width, scale);
  const std::uint32_t full_height = scaled(source_height, scale);
  out.decoded_width = image_detail::kept_width(full_width, crop);
  out.decoded_height = image_detail::kept_height(full_height, crop);
  out.dct_scale = scale;
  out.crop = crop;
  if (sink)
    out.rgb.clear();
  else
    out.rgb.resize(std::size_t{out.width} * out.height * 3);
  const bool resize = crop || out.decoded_width != out.width || out.decoded_height != out.height;
  const std::size_t pixels = std::size_t{full_width} * full_height;
  // The decoded pixels (`channels` bytes each, in decoded_) cropped, then resized into out.rgb
  // or the sink.
  const auto finish = [&](std::uint32_t channels) {
    if (crop) image_detail::crop_in_place(decoded_.data(), full_width, channels, *crop);
    const std::span<const std::uint8_t> decoded(
        decoded_.data(), std::size_t{out.decoded_width} * out.decoded_height * channels);
    if (sink)
      resampler_.resize_in_bands(decoded, out.decoded_width, out.decoded_height, channels,
                                 out.width, out.height, *sink);
    else if (channels == 1)
      resampler_.resize_grey_to_rgb(decoded, out.decoded_width, out.decoded_height, out.rgb,
                                    out.width, out.height);
    else
      resampler_.resize(decoded, out.decoded_width, out.decoded_height, out.rgb, out.width,
                        out.height);
  };

  const JpegColorspace colorspace = header.value().colorspace;
  if (colorspace == JpegColorspace::cmyk || colorspace == JpegColorspace::ycck) {
    // libjpeg turns YCCK into CMYK; the conversion to RGB works in place (see cmyk_to_rgb).
    decoded_.resize(pixels * 4);
    if (auto error = decompress(jpeg, full_width, full_height, TJPF_CMYK, decoded_.data()))
      return error;
    if (!resize && !sink) {
      cmyk_to_rgb(decoded_.data(), pixels, out.rgb.data());
      return std::nullopt;
    }
    cmyk_to_rgb(decoded_.data(), pixels, decoded_.data());
    finish(3);
    return std::nullopt;
  }

  if (colorspace != JpegColorspace::grey) {
    if (!resize && !sink)
      return decompress(jpeg, full_width, full_height, TJPF_RGB, out.rgb.data());
    decoded_.resize(pixels * 3);
    if (auto error = decompress(jpeg, full_width, full_height, TJPF_RGB, decoded_.data()))
      return error;
    finish(3);
    return std::nullopt;
  }

  // Grey is decoded and resized as one channel, written to R, G and B as it goes: the same
  // pixels as resizing its RGB conversion, with a third of the work.
  decoded_.resize(pixels);
  if (auto error = decompress(jpeg, full_width, full_height, TJPF_GRAY, decoded_.data()))
    return error;
  finish(1);
  return std::nullopt;
}

std::optional<ImageError> JpegDecoder::decompress(std::span<const std::uint8_t> jpeg,
                                                  std::uint32_t width, std::uint32_t height,
                                                  int pixel_format, std::uint8_t* pixels) {
  // Asking for exactly a scaled size makes libjpeg-turbo pick that scaling factor.
  if (tjDecompress2(handle_, jpeg.data(), jpeg.size(), pixels, static_cast<int>(width), 0,
                    static_cast<int>(height), pixel_format, TJFLAG_STOPONWARNING) != 0)
    return failure("decoding the JPEG at " + sides(width, height));
  return std::nullopt;
}

}  // namespace odbatch
