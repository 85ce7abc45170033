// Times JPEG decoding to the visual-token geometry: per image class, CPU and wall time per image,
// source megapixels per second, the DCT scales chosen, the share of time spent resizing, the
// resize's speed at every SIMD level this CPU has against scalar, the whole stage against
// libjpeg-turbo's decode alone at the same DCT scale (the floor: what decoding costs without
// resizing; for grey images also decoding straight to the RGB the stage delivers), and what making
// Qwen2-VL's pixel_values (float32, bfloat16) adds to an image, as the image-decoder workers make
// them (ImageProcessor: the values written from the resize's rows, into a reused buffer as the
// image buffer pool hands them out), against making them from a whole resized uint8 image, as
// before they were fused, and what a fresh buffer per image would cost instead. The default decode
// is the processor's exact one (in full, then resized); beside it, the opt-in DCT scaling
// (images.jpeg_dct_scaling): its CPU time and how far its pixels are from the exact ones. Images
// come from --images DIR (every *.jpg / *.jpeg below it) or are generated.
#include <time.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/core/split_mix64.hpp"
#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/image_file.hpp"
#include "odbatch/image/image_processor.hpp"
#include "odbatch/image/jpeg_decoder.hpp"
#include "odbatch/image/pixel_values_writer.hpp"
#include "odbatch/image/simd_level.hpp"

namespace odbatch::bench {
namespace {

using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

constexpr int kHeaderRepetitions = 200;
constexpr std::size_t kErrorsListed = 5;

struct Options {
  std::string images_dir;
  std::string out_path;
  int repeat = 3;
  std::size_t limit = 0;  // 0: every image
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double wall_seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Photo-like pixels: smooth low-frequency colour fields plus sensor-like noise, so the JPEG has
// realistic entropy (neither flat nor random).
Bytes photo_like_rgb(std::uint32_t width, std::uint32_t height, std::uint64_t seed) {
  SplitMix64 rng(seed);
  double phase[3][2];
  for (auto& channel : phase)
    for (double& p : channel) p = rng.uniform() * 6.283;
  Bytes rgb(std::size_t{width} * height * 3);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x)
      for (std::uint32_t c = 0; c < 3; ++c) {
        const double u = 7.0 * x / width + phase[c][0];
        const double v = 5.0 * y / height + phase[c][1];
        const double smooth = 128 + 70 * std::sin(u) * std::cos(v) + 30 * std::sin(3.1 * u + v);
        const double noise = static_cast<double>(rng.next() % 25) - 12;
        rgb[(std::size_t{y} * width + x) * 3 + c] =
            static_cast<std::uint8_t>(std::clamp(smooth + noise, 0.0, 255.0));
      }
  return rgb;
}

Bytes compress(const Bytes& rgb, std::uint32_t width, std::uint32_t height, int subsampling) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), tjDestroy);
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  if (!handle ||
      tjCompress2(handle.get(), rgb.data(), static_cast<int>(width), 0, static_cast<int>(height),
                  TJPF_RGB, &jpeg, &size, subsampling, 90, 0) != 0) {
    tjFree(jpeg);
    throw std::runtime_error("cannot generate a JPEG");
  }
  Bytes bytes(jpeg, jpeg + size);
  tjFree(jpeg);
  return bytes;
}

struct Sample {
  std::string name;
  std::string image_class;
  Bytes jpeg;
};

std::vector<Sample> generated_samples() {
  struct Spec {
    std::uint32_t width, height;
    int subsampling;
    const char* label;
    int copies;
  };
  const Spec specs[] = {
      {4000, 3000, TJSAMP_420, "12 MP camera photo 4000x3000 4:2:0", 2},
      {4352, 2448, TJSAMP_420, "10.7 MP wallpaper 4352x2448 4:2:0", 2},
      {1920, 1080, TJSAMP_420, "2 MP 1920x1080 4:2:0", 4},
      {1024, 768, TJSAMP_444, "0.8 MP 1024x768 4:4:4", 6},
      {640, 427, TJSAMP_420, "0.27 MP 640x427 4:2:0", 12},
      {320, 240, TJSAMP_GRAY, "0.08 MP 320x240 grey", 24},
      {150, 150, TJSAMP_444, "0.02 MP 150x150 4:4:4", 24},
      {40, 30, TJSAMP_420, "0.001 MP 40x30 4:2:0 (enlarged to 84x56)", 24},
  };
  std::vector<Sample> samples;
  std::uint64_t seed = 1;
  for (const Spec& spec : specs)
    for (int copy = 0; copy < spec.copies; ++copy) {
      const Bytes rgb = photo_like_rgb(spec.width, spec.height, seed++);
      samples.push_back({spec.label + std::string(" #") + std::to_string(copy), spec.label,
                         compress(rgb, spec.width, spec.height, spec.subsampling)});
    }
  return samples;
}

bool is_jpeg_name(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".jpg" || extension == ".jpeg";
}

std::vector<std::filesystem::path> jpeg_paths(const std::string& dir, std::size_t limit) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && is_jpeg_name(entry.path()))
      paths.push_back(std::filesystem::relative(entry.path(), dir));
  std::sort(paths.begin(), paths.end());
  if (limit > 0 && paths.size() > limit) paths.resize(limit);
  if (paths.empty()) throw std::runtime_error("no *.jpg or *.jpeg files under " + dir);
  return paths;
}

// Real images are grouped by declared size and colour; the header decides, before decoding.
std::string class_of(const ImageResult<JpegHeader>& header) {
  if (!header) return "unreadable header";
  const double megapixels = static_cast<double>(header.value().width) * header.value().height / 1e6;
  const char* size = megapixels < 0.1   ? "< 0.1 MP"
                     : megapixels < 0.5 ? "0.1-0.5 MP"
                     : megapixels < 2   ? "0.5-2 MP"
                     : megapixels < 8   ? "2-8 MP"
                                        : ">= 8 MP";
  return std::string(size) + (header.value().components == 1 ? " grey" : " colour");
}

struct ClassStats {
  int images = 0;
  int rejected = 0;
  double cpu_s = 0;
  double wall_s = 0;
  double resize_s = 0;         // CPU time, at the decoder's SIMD level
  double libjpeg_turbo_s = 0;  // CPU time of tjDecompress2 alone at the same scale
  // Grey images: tjDecompress2 straight to RGB, what the stage also delivers (0 for colour).
  double libjpeg_turbo_rgb_s = 0;
  std::map<SimdLevel, double> resize_at_level_s;
  // ImageProcessor's CPU time into a reused buffer (as the workers, with the image buffer pool),
  // at uint8 and at each pixel_values dtype, and into a fresh buffer at each dtype.
  double uint8_image_s = 0;
  std::map<PixelDtype, double> pixel_values_s;
  std::map<PixelDtype, double> fresh_buffer_s;
  std::map<PixelDtype, double> unfused_values_s;  // decode to uint8, then PixelValuesWriter
  double header_s = 0;                            // CPU time
  std::uint64_t source_pixels = 0;                // summed over repetitions
  std::uint64_t output_pixels = 0;
  // With jpeg_dct_scaling: CPU time, the scales it chose, and its pixels against the exact ones.
  double dct_scaled_cpu_s = 0;
  std::map<std::string, int> dct_scales;
  std::uint64_t dct_abs_difference = 0;  // summed over every channel value
  std::uint64_t dct_values = 0;
  int dct_max_difference = 0;
  int dct_images_differing = 0;
  std::vector<std::string> errors;
};

void merge(ClassStats& into, const ClassStats& from) {
  into.images += from.images;
  into.rejected += from.rejected;
  into.cpu_s += from.cpu_s;
  into.wall_s += from.wall_s;
  into.resize_s += from.resize_s;
  into.libjpeg_turbo_s += from.libjpeg_turbo_s;
  into.libjpeg_turbo_rgb_s += from.libjpeg_turbo_rgb_s;
  for (const auto& [level, seconds] : from.resize_at_level_s)
    into.resize_at_level_s[level] += seconds;
  into.uint8_image_s += from.uint8_image_s;
  for (const auto& [dtype, seconds] : from.pixel_values_s) into.pixel_values_s[dtype] += seconds;
  for (const auto& [dtype, seconds] : from.unfused_values_s)
    into.unfused_values_s[dtype] += seconds;
  for (const auto& [dtype, seconds] : from.fresh_buffer_s) into.fresh_buffer_s[dtype] += seconds;
  into.header_s += from.header_s;
  into.source_pixels += from.source_pixels;
  into.output_pixels += from.output_pixels;
  into.dct_scaled_cpu_s += from.dct_scaled_cpu_s;
  for (const auto& [scale, count] : from.dct_scales) into.dct_scales[scale] += count;
  into.dct_abs_difference += from.dct_abs_difference;
  into.dct_values += from.dct_values;
  into.dct_max_difference = std::max(into.dct_max_difference, from.dct_max_difference);
  into.dct_images_differing += from.dct_images_differing;
  for (const auto& error : from.errors)
    if (into.errors.size() < kErrorsListed) into.errors.push_back(error);
}

std::vector<SimdLevel> available_levels() {
  std::vector<SimdLevel> levels;
  for (const SimdLevel level : kSimdLevels)
    if (simd_level_available(level)) levels.push_back(level);
  return levels;
}

int turbojpeg_format(const JpegHeader& header) {
  switch (header.colorspace) {
    case JpegColorspace::grey:
      return TJPF_GRAY;
    case JpegColorspace::cmyk:
    case JpegColorspace::ycck:
      return TJPF_CMYK;
    default:
      return TJPF_RGB;
  }
}

// One image's statistics: decode time per decode (after a warm-up decode), header time,
// libjpeg-turbo's own decode at the chosen scale, and the time of the resize inside decode,
// measured alone at the decoder's level and at every level.
// CPU seconds per call of `make`, which makes one image.
template <class Make>
double seconds_per_image(int repeat, Make make) {
  const double start = thread_cpu_seconds();
  for (int i = 0; i < repeat; ++i) make();
  return (thread_cpu_seconds() - start) / repeat;
}

// The pixel_values before they were fused: a whole resized uint8 image (in a reused buffer), then
// a new buffer and the values from it.
double unfused_values_seconds(const Bytes& jpeg, JpegDecoder& decoder, DecodedImage& image,
                              const PixelValuesWriter& writer, int repeat) {
  const VisionGeometryConfig geometry;
  return seconds_per_image(repeat, [&] {
    (void)decoder.decode(jpeg, geometry, image);
    DecodedImage out;
    out.patch_values.resize(writer.bytes_for(image.width, image.height));
    writer.write(image.rgb, image.width, image.height, out.patch_values);
  });
}

// The DCT-scaled decode's time per image and its pixels' distance from the exact `image`.
void measure_dct_scaling(const Sample& sample, int repeat, JpegDecoder& scaled_decoder,
                         const DecodedImage& image, ClassStats& stats) {
  const VisionGeometryConfig geometry;
  DecodedImage scaled;
  (void)scaled_decoder.decode(sample.jpeg, geometry, scaled);
  stats.dct_scaled_cpu_s = seconds_per_image(
      repeat, [&] { (void)scaled_decoder.decode(sample.jpeg, geometry, scaled); });
  stats.dct_scales[std::to_string(scaled.dct_scale.num) + "/" +
                   std::to_string(scaled.dct_scale.den)] = 1;
  int most = 0;
  for (std::size_t i = 0; i < image.rgb.size(); ++i) {
    const int difference = std::abs(int{image.rgb[i]} - int{scaled.rgb[i]});
    stats.dct_abs_difference += static_cast<std::uint64_t>(difference);
    most = std::max(most, difference);
  }
  stats.dct_values = image.rgb.size();
  stats.dct_max_difference = most;
  stats.dct_images_differing = most > 0 ? 1 : 0;
}

ClassStats measure(const Sample& sample, int repeat, JpegDecoder& decoder,
                   JpegDecoder& scaled_decoder, std::map<SimdLevel, BicubicResampler>& resamplers,
                   const std::map<PixelDtype, PixelValuesWriter>& writers,
                   std::map<PixelDtype, ImageProcessor>& processors, tjhandle turbo) {
  ClassStats stats;
  stats.images = 1;
  const VisionGeometryConfig geometry;
  DecodedImage image;
  if (const auto error = decoder.decode(sample.jpeg, geometry, image)) {
    stats.rejected = 1;
    stats.errors.push_back(sample.name + ": " + std::string(to_string(error->kind)) + ": " +
                           error->message);
    return stats;
  }
  const double header_start = thread_cpu_seconds();
  for (int i = 0; i < kHeaderRepetitions; ++i) (void)decoder.read_header(sample.jpeg);
  stats.header_s = (thread_cpu_seconds() - header_start) / kHeaderRepetitions;

  const double cpu_start = thread_cpu_seconds();
  const auto wall_start = Clock::now();
  for (int i = 0; i < repeat; ++i) (void)decoder.decode(sample.jpeg, geometry, image);
  stats.wall_s = wall_seconds(wall_start) / repeat;
  stats.cpu_s = (thread_cpu_seconds() - cpu_start) / repeat;

  const JpegHeader header = decoder.read_header(sample.jpeg).value();
  const int format = turbojpeg_format(header);
  Bytes decoded(std::size_t{image.decoded_width} * image.decoded_height * tjPixelSize[format]);
  const double turbo_start = thread_cpu_seconds();
  for (int i = 0; i < repeat; ++i)
    (void)tjDecompress2(turbo, sample.jpeg.data(), sample.jpeg.size(), decoded.data(),
                        static_cast<int>(image.decoded_width), 0,
                        static_cast<int>(image.decoded_height), format, 0);
  stats.libjpeg_turbo_s = (thread_cpu_seconds() - turbo_start) / repeat;
  if (format == TJPF_GRAY) {
    Bytes rgb(std::size_t{image.decoded_width} * image.decoded_height * 3);
    stats.libjpeg_turbo_rgb_s = seconds_per_image(repeat, [&] {
      (void)tjDecompress2(turbo, sample.jpeg.data(), sample.jpeg.size(), rgb.data(),
                          static_cast<int>(image.decoded_width), 0,
                          static_cast<int>(image.decoded_height), TJPF_RGB, 0);
    });
  }

  // Same sizes, channels and code as the resize inside decode(), so the same time.
  if (image.decoded_width != image.width || image.decoded_height != image.height) {
    const std::uint32_t channels = header.components;
    decoded.resize(std::size_t{image.decoded_width} * image.decoded_height * channels);
    Bytes resized(std::size_t{image.width} * image.height * channels);
    for (auto& [level, resampler] : resamplers) {
      const double resize_start = thread_cpu_seconds();
      for (int i = 0; i < repeat; ++i)
        resampler.resize(decoded, image.decoded_width, image.decoded_height, resized, image.width,
                         image.height, channels);
      stats.resize_at_level_s[level] = (thread_cpu_seconds() - resize_start) / repeat;
    }
    stats.resize_s = stats.resize_at_level_s.at(default_simd_level());
  }
  // Alternated, so that drifts of the machine's speed fall on both alike.
  for (auto& [dtype, processor] : processors) {
    DecodedImage reused;
    (void)processor.process(sample.jpeg, reused);  // the buffer the pool would hand back
    const auto into_reused = [&, &processor = processor] {
      (void)processor.process(sample.jpeg, reused);
    };
    const auto into_fresh = [&, &processor = processor] { (void)processor.process(sample.jpeg); };
    const double reused_s = seconds_per_image(repeat, into_reused);
    stats.fresh_buffer_s[dtype] = seconds_per_image(repeat, into_fresh);
    if (dtype == PixelDtype::uint8) {
      stats.uint8_image_s = reused_s;
      continue;
    }
    stats.pixel_values_s[dtype] = reused_s;
    stats.unfused_values_s[dtype] =
        unfused_values_seconds(sample.jpeg, decoder, image, writers.at(dtype), repeat);
  }
  stats.source_pixels = std::uint64_t{image.source_width} * image.source_height;
  stats.output_pixels = std::uint64_t{image.width} * image.height;
  measure_dct_scaling(sample, repeat, scaled_decoder, image, stats);
  return stats;
}

Report class_report(const std::string& name, const ClassStats& s) {
  const int decoded = s.images - s.rejected;
  const double per_image = decoded > 0 ? 1.0 / decoded : 0.0;
  Report entry = {{"class", name}, {"images", s.images}, {"rejected", s.rejected}};
  if (decoded > 0) {
    entry["decode_cpu_ms_per_image"] = rounded(s.cpu_s * per_image * 1e3, 3);
    entry["decode_wall_ms_per_image"] = rounded(s.wall_s * per_image * 1e3, 3);
    entry["images_per_cpu_s"] = rounded(decoded / s.cpu_s, 1);
    entry["source_mp_per_cpu_s"] = rounded(static_cast<double>(s.source_pixels) / 1e6 / s.cpu_s, 1);
    entry["output_mp_per_cpu_s"] = rounded(static_cast<double>(s.output_pixels) / 1e6 / s.cpu_s, 1);
    entry["mean_source_mp"] = rounded(static_cast<double>(s.source_pixels) * per_image / 1e6, 3);
    entry["mean_output_mp"] = rounded(static_cast<double>(s.output_pixels) * per_image / 1e6, 3);
    entry["resize_share_of_cpu"] = rounded(s.resize_s / s.cpu_s, 3);
    entry["libjpeg_turbo_cpu_ms_per_image"] = rounded(s.libjpeg_turbo_s * per_image * 1e3, 3);
    entry["stage_over_libjpeg_turbo"] = rounded(s.cpu_s / s.libjpeg_turbo_s, 3);
    if (s.libjpeg_turbo_rgb_s > 0)
      entry["stage_over_libjpeg_turbo_to_rgb"] = rounded(s.cpu_s / s.libjpeg_turbo_rgb_s, 3);
    Report resize_speed;
    Report speedup;
    for (const auto& [level, seconds] : s.resize_at_level_s) {
      if (seconds <= 0) continue;
      const std::string level_name(to_string(level));
      resize_speed[level_name] = rounded(static_cast<double>(s.output_pixels) / 1e6 / seconds, 1);
      speedup[level_name] = rounded(s.resize_at_level_s.at(SimdLevel::scalar) / seconds, 2);
    }
    if (!resize_speed.empty()) {
      entry["resize_output_mp_per_cpu_s"] = resize_speed;
      entry["resize_speedup_over_scalar"] = speedup;
    }
    // What pixel_values add to ImageProcessor's uint8 image, and the unfused way's time over the
    // fused one's, both whole images.
    Report pixel_values_ms;
    Report pixel_values_share;
    Report unfused_over_fused;
    for (const auto& [dtype, seconds] : s.pixel_values_s) {
      const std::string dtype_name(to_string(dtype));
      const double added = seconds - s.uint8_image_s;
      pixel_values_ms[dtype_name] = rounded(added * per_image * 1e3, 3);
      pixel_values_share[dtype_name] = rounded(added / s.uint8_image_s, 3);
      unfused_over_fused[dtype_name] = rounded(s.unfused_values_s.at(dtype) / seconds, 3);
    }
    if (!pixel_values_ms.empty()) {
      entry["uint8_image_cpu_ms_per_image"] = rounded(s.uint8_image_s * per_image * 1e3, 3);
      entry["pixel_values_cpu_ms_per_image"] = pixel_values_ms;
      entry["pixel_values_share_of_uint8_image_cpu"] = pixel_values_share;
      entry["pixel_values_unfused_over_fused"] = unfused_over_fused;
    }
    // What a new buffer per image (an allocation, its page faults, zero-filling for uint8) costs
    // over decoding into a reused one.
    Report fresh_over_reused;
    for (const auto& [dtype, seconds] : s.fresh_buffer_s) {
      const double reused =
          dtype == PixelDtype::uint8 ? s.uint8_image_s : s.pixel_values_s.at(dtype);
      if (reused > 0)
        fresh_over_reused[std::string(to_string(dtype))] = rounded(seconds / reused, 3);
    }
    if (!fresh_over_reused.empty()) entry["fresh_buffer_over_reused"] = fresh_over_reused;
    entry["header_cpu_us_per_image"] = rounded(s.header_s * per_image * 1e6, 3);
    entry["dct_scaling"] = {
        {"cpu_ms_per_image", rounded(s.dct_scaled_cpu_s * per_image * 1e3, 3)},
        {"exact_over_dct_scaled_cpu", rounded(s.cpu_s / s.dct_scaled_cpu_s, 3)},
        {"scales", s.dct_scales},
        {"images_differing", s.dct_images_differing},
        {"mean_abs_difference",
         rounded(static_cast<double>(s.dct_abs_difference) /
                     static_cast<double>(std::max<std::uint64_t>(s.dct_values, 1)),
                 3)},
        {"max_abs_difference", s.dct_max_difference}};
  }
  if (!s.errors.empty()) entry["first_errors"] = s.errors;
  return entry;
}

int run(const Options& options) {
  JpegDecoder decoder;
  JpegDecoderLimits dct_scaling;
  dct_scaling.jpeg_dct_scaling = true;
  JpegDecoder scaled_decoder(dct_scaling);
  std::map<SimdLevel, BicubicResampler> resamplers;
  for (const SimdLevel level : available_levels()) resamplers.emplace(level, level);
  std::map<PixelDtype, PixelValuesWriter> writers;
  for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
    PixelValuesConfig config;
    config.dtype = dtype;
    writers.emplace(dtype, PixelValuesWriter(config, VisionGeometryConfig{}));
  }
  std::map<PixelDtype, ImageProcessor> processors;
  for (const PixelDtype dtype : {PixelDtype::uint8, PixelDtype::float32, PixelDtype::bfloat16}) {
    PixelValuesConfig config;
    config.dtype = dtype;
    processors.emplace(dtype, ImageProcessor({}, VisionGeometryConfig{}, config));
  }
  const std::unique_ptr<void, int (*)(tjhandle)> turbo(tjInitDecompress(), tjDestroy);
  std::map<std::string, ClassStats> classes;
  ClassStats total;
  Report report;
  report["benchmark"] = "image_decode";
  report["geometry"] = {{"patch_size", VisionGeometryConfig{}.patch_size},
                        {"merge_size", VisionGeometryConfig{}.merge_size},
                        {"min_pixels", VisionGeometryConfig{}.min_pixels},
                        {"max_pixels", VisionGeometryConfig{}.max_pixels}};
  report["repeat"] = options.repeat;
  report["simd_level"] = to_string(default_simd_level());
  const auto add = [&](const Sample& sample) {
    const ClassStats one = measure(sample, options.repeat, decoder, scaled_decoder, resamplers,
                                   writers, processors, turbo.get());
    merge(classes[sample.image_class], one);
    merge(total, one);
  };
  if (options.images_dir.empty()) {
    report["images"] = "generated (photo-like, quality 90)";
    for (const Sample& sample : generated_samples()) add(sample);
  } else {
    report["images"] = options.images_dir;
    for (const auto& path : jpeg_paths(options.images_dir, options.limit)) {
      auto bytes = read_image_file(options.images_dir, path.string());
      if (!bytes) {
        ClassStats unreadable;
        unreadable.images = unreadable.rejected = 1;
        unreadable.errors.push_back(bytes.error().message);
        merge(classes["unreadable file"], unreadable);
        merge(total, unreadable);
        continue;
      }
      Sample sample{path.string(), "", std::move(bytes).value()};
      sample.image_class = class_of(decoder.read_header(sample.jpeg));
      add(sample);
    }
  }
  Report per_class = Report::array();
  for (const auto& [name, stats] : classes) per_class.push_back(class_report(name, stats));
  report["classes"] = std::move(per_class);
  report["all"] = class_report("all", total);
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  odbatch::bench::Options options;
  try {
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
                  << " [--images DIR] [--repeat N (3)] [--limit N] [--out FILE]\n";
        return 2;
      }
    }
    return odbatch::bench::run(options);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
