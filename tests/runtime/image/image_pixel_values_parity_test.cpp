// Qwen2-VL's pixel_values against a numpy reimplementation of Hugging Face's
// Qwen2VLImageProcessor (qwen2vl_pixel_values_cases.py, run first as a CTest fixture) on the
// dataset's photos, grey ones included: float32 within 1e-6 (in fact bit for bit), bfloat16
// equal to the reference rounded to nearest even. Both PixelValuesWriter on Pillow's resized
// pixels and the whole ImageProcessor (decode, resize, pixel_values) are checked.
#include <doctest/doctest.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/image_processor.hpp"
#include "odbatch/image/pixel_values_writer.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct ReferenceCase {
  std::string path;
  bool grey = false;
  std::uint32_t decoded_width = 0;
  std::uint32_t decoded_height = 0;
  std::uint32_t decoded_crc = 0;
  VisionGeometryConfig geometry;
  std::uint32_t target_width = 0;
  std::uint32_t target_height = 0;
  std::uint32_t grid_h = 0;
  std::uint32_t grid_w = 0;
  std::size_t first_value = 0;
  std::size_t values = 0;
};

std::string oracle_file(const char* name) {
  return std::string(ODBATCH_PIXEL_VALUES_CASES) + "/" + name;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<ReferenceCase> read_cases() {
  std::ifstream in(oracle_file("cases.tsv"));
  REQUIRE_MESSAGE(in, "cannot read " << oracle_file("cases.tsv"));
  std::vector<ReferenceCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ReferenceCase c;
    std::string mode;
    std::getline(fields, c.path, '\t');
    fields >> mode >> c.decoded_width >> c.decoded_height >> c.decoded_crc >>
        c.geometry.min_pixels >> c.geometry.max_pixels >> c.target_width >> c.target_height >>
        c.grid_h >> c.grid_w >> c.first_value >> c.values;
    REQUIRE_MESSAGE(fields, "malformed line: " << line);
    c.grey = mode == "L";
    cases.push_back(c);
  }
  return cases;
}

// The reference's values as little-endian arrays of T (this machine's order: x86 and ARM alike).
template <class T>
std::vector<T> read_values(const char* name) {
  const Bytes bytes = read_file(oracle_file(name));
  REQUIRE(bytes.size() % sizeof(T) == 0);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// Pillow's decode (draft() at a power-of-two DCT scale for the large photos) by TurboJPEG.
Bytes decode(const Bytes& jpeg, const ReferenceCase& c) {
  tjhandle handle = tjInitDecompress();
  REQUIRE(handle != nullptr);
  Bytes pixels(std::size_t{c.decoded_width} * c.decoded_height * (c.grey ? 1 : 3));
  const bool decoded =
      tjDecompress2(handle, jpeg.data(), jpeg.size(), pixels.data(),
                    static_cast<int>(c.decoded_width), 0, static_cast<int>(c.decoded_height),
                    c.grey ? TJPF_GRAY : TJPF_RGB, 0) == 0;
  tjDestroy(handle);
  REQUIRE_MESSAGE(decoded, c.path << ": TurboJPEG cannot decode it at " << c.decoded_width << "x"
                                  << c.decoded_height);
  REQUIRE_MESSAGE(
      crc32(0, pixels.data(), static_cast<unsigned int>(pixels.size())) == c.decoded_crc,
      c.path << ": TurboJPEG's pixels differ from Pillow's");
  return pixels;
}

Bytes resized_rgb(const Bytes& decoded, const ReferenceCase& c) {
  BicubicResampler resampler;
  Bytes rgb(std::size_t{c.target_width} * c.target_height * 3);
  if (c.grey)
    resampler.resize_grey_to_rgb(decoded, c.decoded_width, c.decoded_height, rgb, c.target_width,
                                 c.target_height);
  else
    resampler.resize(decoded, c.decoded_width, c.decoded_height, rgb, c.target_width,
                     c.target_height);
  return rgb;
}

template <class T>
std::vector<T> values_of(std::span<const std::uint8_t> bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

double max_abs_difference(const std::vector<float>& ours, const float* reference) {
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i)
    worst = std::max(worst, std::fabs(double{ours[i]} - double{reference[i]}));
  return worst;
}

std::size_t bfloat16_mismatches(const std::vector<std::uint16_t>& ours,
                                const std::uint16_t* reference) {
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) mismatches += ours[i] != reference[i] ? 1 : 0;
  return mismatches;
}

PixelValuesConfig with_dtype(PixelDtype dtype) {
  PixelValuesConfig config;
  config.dtype = dtype;
  return config;
}

TEST_CASE("pixel_values equal the Hugging Face processor's math on the dataset's photos") {
  const std::vector<ReferenceCase> cases = read_cases();
  const auto reference_float32 = read_values<float>("float32.bin");
  const auto reference_bfloat16 = read_values<std::uint16_t>("bfloat16.bin");
  // One photo of each size in the dataset plus grey ones: fewer means the dataset or the
  // script broke.
  REQUIRE(cases.size() >= 30);
  REQUIRE(reference_bfloat16.size() == reference_float32.size());

  std::size_t grey_cases = 0;
  std::size_t whole_processor_cases = 0;
  for (const ReferenceCase& c : cases) {
    CAPTURE(c.path);
    CAPTURE(c.target_width);
    CAPTURE(c.target_height);
    grey_cases += c.grey ? 1 : 0;
    REQUIRE(c.first_value + c.values <= reference_float32.size());
    const float* expected_float32 = &reference_float32[c.first_value];
    const std::uint16_t* expected_bfloat16 = &reference_bfloat16[c.first_value];

    const PixelValuesWriter float32(with_dtype(PixelDtype::float32), c.geometry);
    const PixelValuesWriter bfloat16(with_dtype(PixelDtype::bfloat16), c.geometry);
    REQUIRE(std::size_t{c.grid_h} * c.grid_w * float32.values_per_patch() == c.values);

    // The writer on the pixels Pillow resized (BicubicResampler is Pillow-exact).
    const Bytes jpeg = read_file(std::string(ODBATCH_DATASET_IMAGES_DIR) + "/" + c.path);
    const Bytes rgb = resized_rgb(decode(jpeg, c), c);
    Bytes out(float32.bytes_for(c.target_width, c.target_height));
    REQUIRE(out.size() == c.values * sizeof(float));
    float32.write(rgb, c.target_width, c.target_height, out);
    const auto ours_float32 = values_of<float>(out);
    CHECK(max_abs_difference(ours_float32, expected_float32) <= 1e-6);
    CHECK(std::memcmp(ours_float32.data(), expected_float32, out.size()) == 0);

    Bytes halves(bfloat16.bytes_for(c.target_width, c.target_height));
    bfloat16.write(rgb, c.target_width, c.target_height, halves);
    CHECK(bfloat16_mismatches(values_of<std::uint16_t>(halves), expected_bfloat16) == 0);

    // The whole worker path: decode, resize, pixel_values. Where odbatch decodes at full scale as
    // the reference does (an enlargement), it must equal the reference; where it decodes at a
    // smaller DCT scale (documented in jpeg_decoder.hpp), it must equal the writer applied to
    // its own resize.
    for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
      CAPTURE(to_string(dtype));
      ImageProcessor processor({}, c.geometry, with_dtype(dtype));
      auto processed = processor.process(jpeg);
      REQUIRE(processed);
      const DecodedImage& image = processed.value();
      CHECK(image.dtype == dtype);
      CHECK(image.rgb.empty());
      CHECK(image.values_per_patch == float32.values_per_patch());
      CHECK(image.grid.grid_h == c.grid_h);
      CHECK(image.grid.grid_w == c.grid_w);
      REQUIRE(image.patch_values.size() == c.values * element_bytes(dtype));
      const bool same_decode =
          image.decoded_width == c.decoded_width && image.decoded_height == c.decoded_height;
      if (same_decode) {
        if (dtype == PixelDtype::float32)
          CHECK(max_abs_difference(values_of<float>(image.patch_values), expected_float32) <= 1e-6);
        else
          CHECK(bfloat16_mismatches(values_of<std::uint16_t>(image.patch_values),
                                    expected_bfloat16) == 0);
        whole_processor_cases += 1;
      } else {
        JpegDecoder decoder;
        auto uint8 = decoder.decode(jpeg, c.geometry);
        REQUIRE(uint8);
        const PixelValuesWriter writer(with_dtype(dtype), c.geometry);
        Bytes expected(writer.bytes_for(c.target_width, c.target_height));
        writer.write(uint8.value().rgb, c.target_width, c.target_height, expected);
        CHECK(std::equal(image.patch_values.begin(), image.patch_values.end(), expected.begin(),
                         expected.end()));
      }
    }
  }
  CHECK(grey_cases >= 4);
  // The enlargements at Qwen2-VL's default geometry, each in both dtypes.
  CHECK(whole_processor_cases >= 8);
}

}  // namespace
}  // namespace odbatch
