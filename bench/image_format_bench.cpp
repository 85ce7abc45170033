// Times decoding PNG and WebP against JPEG for the same photos, as the image-decoder workers do
// it (ImageDecoder::decode to the default visual-token geometry, resize included): each JPEG of
// --images DIR (default: the dataset's data/images) is decoded whole, re-encoded as PNG
// (libpng's default compression), lossy WebP (quality 80) and lossless WebP, and every version is
// decoded --repeat times, the best kept. Reports per format the CPU ms per image and per source
// megapixel, the ratio to JPEG, the header read's time and the files' sizes.
#include <png.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/encode.h>

#include <algorithm>
#include <array>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_file.hpp"

namespace odbatch::bench {
namespace {

using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

constexpr int kHeaderRepetitions = 200;
constexpr std::array<const char*, 4> kFormats = {"jpeg", "png", "webp_lossy", "webp_lossless"};

struct Options {
  std::string images_dir = ODBATCH_SOURCE_DIR "/data/images";
  std::string out_path;
  int repeat = 3;
  std::size_t limit = 24;
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Photo {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  Bytes rgb;
};

Photo decode_whole(const Bytes& jpeg) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitDecompress(), tjDestroy);
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (!handle || tjDecompressHeader3(handle.get(), jpeg.data(), jpeg.size(), &width, &height,
                                     &subsampling, &colorspace) != 0)
    throw std::runtime_error("cannot read a JPEG header");
  Photo photo{static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height), {}};
  photo.rgb.resize(std::size_t(width) * height * 3);
  if (tjDecompress2(handle.get(), jpeg.data(), jpeg.size(), photo.rgb.data(), width, 0, height,
                    TJPF_RGB, 0) != 0)
    throw std::runtime_error(std::string("TurboJPEG: ") + tjGetErrorStr2(handle.get()));
  return photo;
}

Bytes encode_png(const Photo& photo) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = photo.width;
  image.height = photo.height;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&image, nullptr, &size, 0, photo.rgb.data(), 0, nullptr) == 0)
    throw std::runtime_error(std::string("libpng: ") + image.message);
  Bytes png(size);
  if (png_image_write_to_memory(&image, png.data(), &size, 0, photo.rgb.data(), 0, nullptr) == 0)
    throw std::runtime_error(std::string("libpng: ") + image.message);
  png.resize(size);
  return png;
}

// Lossless at method 0, the fastest to encode: the decoder's work hardly depends on it.
Bytes encode_webp(const Photo& photo, bool lossless) {
  WebPConfig config;
  WebPPicture picture;
  if (WebPConfigInit(&config) == 0 || WebPPictureInit(&picture) == 0)
    throw std::runtime_error("libwebp version mismatch");
  config.lossless = lossless ? 1 : 0;
  config.quality = lossless ? 0.0f : 80.0f;
  config.method = lossless ? 0 : 4;
  picture.width = static_cast<int>(photo.width);
  picture.height = static_cast<int>(photo.height);
  picture.use_argb = lossless ? 1 : 0;
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  const bool encoded =
      WebPPictureImportRGB(&picture, photo.rgb.data(), static_cast<int>(photo.width) * 3) != 0 &&
      WebPEncode(&config, &picture) != 0;
  WebPPictureFree(&picture);
  Bytes webp(writer.mem, writer.mem + writer.size);
  WebPMemoryWriterClear(&writer);
  if (!encoded) throw std::runtime_error("libwebp could not encode a photo");
  return webp;
}

std::vector<fs::path> photos_under(const Options& options) {
  std::vector<fs::path> all;
  for (const auto& entry : fs::recursive_directory_iterator(options.images_dir)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".jpg" || ext == ".jpeg")) all.push_back(entry.path());
  }
  std::sort(all.begin(), all.end());
  if (all.empty()) throw std::runtime_error("no JPEGs under " + options.images_dir);
  // Spread over the sorted list, so that every folder (and size) is represented.
  std::vector<fs::path> picked;
  const std::size_t count = std::min(options.limit, all.size());
  for (std::size_t i = 0; i < count; ++i) picked.push_back(all[i * all.size() / count]);
  return picked;
}

struct Totals {
  double decode_seconds = 0;
  double header_seconds = 0;
  std::uint64_t bytes = 0;
  std::size_t images = 0;
};

Report run(const Options& options) {
  const VisionGeometryConfig geometry;
  ImageDecoder decoder;
  std::array<Totals, kFormats.size()> totals{};
  double megapixels = 0;
  for (const fs::path& path : photos_under(options)) {
    auto jpeg = read_image_file(path.parent_path(), path.filename().string());
    if (!jpeg) throw std::runtime_error(jpeg.error().message);
    const Photo photo = decode_whole(jpeg.value());
    megapixels += static_cast<double>(photo.width) * photo.height / 1e6;
    const std::array<Bytes, kFormats.size()> files = {std::move(jpeg).value(), encode_png(photo),
                                                      encode_webp(photo, false),
                                                      encode_webp(photo, true)};
    DecodedImage out;
    for (std::size_t f = 0; f < files.size(); ++f) {
      double best = 1e300;
      for (int r = 0; r < options.repeat; ++r) {
        const double start = thread_cpu_seconds();
        if (auto error = decoder.decode(files[f], geometry, out))
          throw std::runtime_error(path.string() + " as " + kFormats[f] + ": " + error->message);
        best = std::min(best, thread_cpu_seconds() - start);
      }
      const double start = thread_cpu_seconds();
      for (int i = 0; i < kHeaderRepetitions; ++i)
        if (!decoder.read_header(files[f])) throw std::runtime_error("header read failed");
      totals[f].header_seconds += (thread_cpu_seconds() - start) / kHeaderRepetitions;
      totals[f].decode_seconds += best;
      totals[f].bytes += files[f].size();
      ++totals[f].images;
    }
  }
  Report report;
  report["images_dir"] = options.images_dir;
  report["images"] = totals[0].images;
  report["source_megapixels"] = rounded(megapixels, 2);
  report["repeat"] = options.repeat;
  report["geometry"] = {{"min_pixels", geometry.min_pixels}, {"max_pixels", geometry.max_pixels}};
  Report formats;
  for (std::size_t f = 0; f < kFormats.size(); ++f) {
    const Totals& t = totals[f];
    const double images = static_cast<double>(t.images);
    formats[kFormats[f]] = {
        {"decode_ms_per_image", rounded(t.decode_seconds * 1e3 / images, 3)},
        {"decode_ms_per_megapixel", rounded(t.decode_seconds * 1e3 / megapixels, 3)},
        {"vs_jpeg", rounded(t.decode_seconds / totals[0].decode_seconds, 2)},
        {"header_us", rounded(t.header_seconds * 1e6 / images, 3)},
        {"mean_file_kib", rounded(static_cast<double>(t.bytes) / 1024 / images, 1)}};
  }
  report["formats"] = formats;
  return report;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    odbatch::bench::Options options;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--images" && has_value) {
        options.images_dir = argv[++i];
      } else if (arg == "--out" && has_value) {
        options.out_path = argv[++i];
      } else if (arg == "--repeat" && has_value) {
        options.repeat = static_cast<int>(odbatch::bench::parse_count(arg, argv[++i]));
      } else if (arg == "--limit" && has_value) {
        options.limit = odbatch::bench::parse_count(arg, argv[++i]);
      } else {
        std::cerr << "usage: " << argv[0]
                  << " [--images DIR] [--repeat N (3)] [--limit N (24)] [--out FILE]\n";
        return 2;
      }
    }
    odbatch::bench::emit_report(odbatch::bench::run(options), options.out_path);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "image_format_bench: " << e.what() << "\n";
    return 1;
  }
}
