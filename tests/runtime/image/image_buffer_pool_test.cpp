// The image buffer pool: buffers come back whole and are handed out again, within the pool's
// count and byte bounds, from several threads; an image processed into a reused buffer (of a
// larger or a smaller image, of either dtype) equals one processed into a fresh image.
#include <doctest/doctest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "image_test_jpegs.hpp"
#include "odbatch/image/image_buffer_pool.hpp"
#include "odbatch/image/image_processor.hpp"

namespace odbatch {
namespace {

DecodedImage image_of(std::size_t rgb_bytes) {
  DecodedImage image;
  image.rgb.resize(rgb_bytes);
  return image;
}

void check_same(const DecodedImage& a, const DecodedImage& b) {
  CHECK(a.grid == b.grid);
  CHECK(a.width == b.width);
  CHECK(a.height == b.height);
  CHECK(a.dtype == b.dtype);
  CHECK(a.rgb == b.rgb);
  CHECK(a.patch_values == b.patch_values);
  CHECK(a.values_per_patch == b.values_per_patch);
  CHECK(a.source_width == b.source_width);
  CHECK(a.source_height == b.source_height);
  CHECK(a.decoded_width == b.decoded_width);
  CHECK(a.decoded_height == b.decoded_height);
  CHECK(a.dct_scale == b.dct_scale);
}

}  // namespace

TEST_CASE("a buffer given back is handed out again, the most recent first") {
  ImageBufferPool pool(4, 1 << 20);
  CHECK(pool.take().rgb.capacity() == 0);
  DecodedImage first = image_of(1000);
  DecodedImage second = image_of(2000);
  const std::uint8_t* first_data = first.rgb.data();
  const std::uint8_t* second_data = second.rgb.data();
  pool.give_back(std::move(first));
  pool.give_back(std::move(second));
  CHECK(pool.kept_buffers() == 2);
  CHECK(pool.kept_bytes() >= 3000);
  DecodedImage taken = pool.take();
  CHECK(taken.rgb.data() == second_data);
  CHECK(taken.rgb.size() == 2000);
  CHECK(pool.take().rgb.data() == first_data);
  CHECK(pool.kept_buffers() == 0);
  CHECK(pool.kept_bytes() == 0);
  CHECK(pool.reuses() == 2);
  CHECK(pool.take().rgb.capacity() == 0);
  CHECK(pool.reuses() == 2);
}

TEST_CASE("the pool keeps no more buffers or bytes than its bounds, and no empty buffers") {
  ImageBufferPool pool(2, 5000);
  pool.give_back(DecodedImage{});
  CHECK(pool.kept_buffers() == 0);
  pool.give_back(image_of(3000));
  pool.give_back(image_of(3000));  // over the byte total: freed
  CHECK(pool.kept_buffers() == 1);
  pool.give_back(image_of(1000));
  pool.give_back(image_of(10));  // over the count: freed
  CHECK(pool.kept_buffers() == 2);
  CHECK(pool.kept_bytes() <= 5000);
}

TEST_CASE("threads taking and giving back share the pool safely") {
  ImageBufferPool pool(8, 1 << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        DecodedImage image = pool.take();
        image.rgb.resize(100 + static_cast<std::size_t>(t));
        image.rgb[0] = static_cast<std::uint8_t>(i);
        pool.give_back(std::move(image));
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(pool.kept_buffers() >= 1);
  CHECK(pool.kept_buffers() <= 4);
  CHECK(pool.reuses() >= 8000 - 4);
}

TEST_CASE("an image processed into a reused buffer equals one processed into a fresh image") {
  const VisionGeometryConfig geometry;
  const test::Bytes jpegs[] = {
      test::pattern_jpeg(640, 480),
      test::pattern_jpeg(150, 97),
      test::encode_jpeg(test::pattern_rgb(130, 61), 130, 61, ChromaSubsampling::grey),
      test::pattern_jpeg(56, 84),
      test::pattern_jpeg(900, 700),
  };
  for (const PixelDtype dtype : {PixelDtype::uint8, PixelDtype::float32, PixelDtype::bfloat16}) {
    CAPTURE(to_string(dtype));
    PixelValuesConfig config;
    config.dtype = dtype;
    ImageProcessor processor({}, geometry, config);
    ImageBufferPool pool(4, 64 << 20);
    // Each image goes into the previous one's buffer, which was larger or smaller.
    for (const auto& jpeg : jpegs) {
      const auto fresh = processor.process(jpeg);
      REQUIRE(fresh);
      DecodedImage reused = pool.take();
      REQUIRE_FALSE(processor.process(jpeg, reused));
      check_same(reused, fresh.value());
      pool.give_back(std::move(reused));
    }
    CHECK(pool.reuses() == std::size(jpegs) - 1);
    // A buffer that held another dtype's pixels, and a corrupt image into a used buffer.
    DecodedImage other = image_of(5000);
    other.patch_values.resize(7000);
    const auto fresh = processor.process(jpegs[1]);
    REQUIRE(fresh);
    REQUIRE_FALSE(processor.process(jpegs[1], other));
    check_same(other, fresh.value());
    CHECK(processor.process(test::Bytes{0xFF, 0xD8, 0x00}, other).has_value());
  }
}

}  // namespace odbatch
