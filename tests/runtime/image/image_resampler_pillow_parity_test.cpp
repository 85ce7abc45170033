// The resampler against Pillow on the real dataset's photos: for every JPEG, three Qwen2-VL
// geometries and every SIMD level this CPU has, the bytes equal Pillow 9.4's
// Image.resize(size, BICUBIC) (pillow_resize_cases.py writes Pillow's checksums; a CTest fixture
// runs it first).
#include <doctest/doctest.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "odbatch/image/bicubic_resampler.hpp"
#include "odbatch/image/simd_level.hpp"

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct PillowCase {
  std::string path;
  bool grey = false;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t decoded_crc = 0;
  std::uint32_t target_width = 0;
  std::uint32_t target_height = 0;
  std::uint32_t resized_crc = 0;
  std::uint32_t resized_rgb_crc = 0;
};

std::vector<PillowCase> read_cases() {
  std::ifstream in(ODBATCH_PILLOW_RESIZE_CASES);
  REQUIRE_MESSAGE(in, "cannot read " ODBATCH_PILLOW_RESIZE_CASES);
  std::vector<PillowCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    PillowCase c;
    std::string mode;
    std::getline(fields, c.path, '\t');
    fields >> mode >> c.width >> c.height >> c.decoded_crc >> c.target_width >> c.target_height >>
        c.resized_crc >> c.resized_rgb_crc;
    REQUIRE_MESSAGE(fields, "malformed line: " << line);
    c.grey = mode == "L";
    cases.push_back(c);
  }
  return cases;
}

std::uint32_t crc32_of(const Bytes& bytes) {
  return static_cast<std::uint32_t>(
      crc32(0, bytes.data(), static_cast<unsigned int>(bytes.size())));
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// The JPEG decoded by TurboJPEG at the power-of-two DCT scale that gives width x height, as
// Pillow's draft() decodes it.
Bytes decode(const std::string& path, const PillowCase& c) {
  const Bytes jpeg = read_file(path);
  tjhandle handle = tjInitDecompress();
  REQUIRE(handle != nullptr);
  int width = 0;
  int height = 0;
  int subsampling = 0;
  int colorspace = 0;
  REQUIRE(tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &width, &height, &subsampling,
                              &colorspace) == 0);
  Bytes pixels(std::size_t{c.width} * c.height * (c.grey ? 1 : 3));
  bool decoded = false;
  for (const int denominator : {1, 2, 4, 8}) {
    const tjscalingfactor scale{1, denominator};
    if (static_cast<std::uint32_t>(TJSCALED(width, scale)) != c.width ||
        static_cast<std::uint32_t>(TJSCALED(height, scale)) != c.height)
      continue;
    decoded =
        tjDecompress2(handle, jpeg.data(), jpeg.size(), pixels.data(), static_cast<int>(c.width), 0,
                      static_cast<int>(c.height), c.grey ? TJPF_GRAY : TJPF_RGB, 0) == 0;
    break;
  }
  tjDestroy(handle);
  REQUIRE_MESSAGE(decoded, path << ": no DCT scale gives " << c.width << "x" << c.height);
  return pixels;
}

TEST_CASE("every SIMD level resizes the dataset's photos as Pillow does, byte for byte") {
  const std::vector<PillowCase> cases = read_cases();
  // 240 photos, three geometries each: a shorter list means the dataset or the script broke.
  REQUIRE(cases.size() >= 700);
  std::map<std::string, Bytes> decoded;
  std::size_t grey_cases = 0;
  for (const PillowCase& c : cases) {
    auto [at, added] = decoded.try_emplace(c.path);
    if (added) {
      at->second = decode(std::string(ODBATCH_DATASET_IMAGES_DIR) + "/" + c.path, c);
      // Otherwise a mismatch below would be the decoder's, not the resampler's.
      REQUIRE_MESSAGE(crc32_of(at->second) == c.decoded_crc,
                      c.path << ": TurboJPEG's pixels differ from Pillow's");
    }
    grey_cases += c.grey ? 1 : 0;
  }
  CHECK(grey_cases > 0);
  CHECK(grey_cases < cases.size());

  for (const SimdLevel level : kSimdLevels) {
    if (!simd_level_available(level)) {
      MESSAGE("not checked on this CPU: " << to_string(level));
      continue;
    }
    CAPTURE(to_string(level));
    BicubicResampler resampler(level);
    std::size_t equal = 0;
    for (const PillowCase& c : cases) {
      CAPTURE(c.path);
      CAPTURE(c.target_width);
      CAPTURE(c.target_height);
      const Bytes& source = decoded.at(c.path);
      const std::uint32_t channels = c.grey ? 1 : 3;
      Bytes resized(std::size_t{c.target_width} * c.target_height * channels);
      resampler.resize(source, c.width, c.height, resized, c.target_width, c.target_height,
                       channels);
      bool same = crc32_of(resized) == c.resized_crc;
      if (c.grey) {
        Bytes rgb(std::size_t{c.target_width} * c.target_height * 3);
        resampler.resize_grey_to_rgb(source, c.width, c.height, rgb, c.target_width,
                                     c.target_height);
        same = same && crc32_of(rgb) == c.resized_rgb_crc;
      }
      CHECK(same);
      equal += same ? 1 : 0;
    }
    CHECK(equal == cases.size());
  }
}

}  // namespace
}  // namespace odbatch
