#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "odbatch/batch/batch_collator.hpp"
#include "odbatch/batch/batch_pool.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/image/pixel_values_writer.hpp"

using namespace odbatch;

namespace {

SamplePayload sample(SampleId id, std::vector<std::int32_t> ids, std::vector<std::int32_t> labels) {
  SamplePayload s;
  s.id = id;
  s.input_ids = std::move(ids);
  s.labels = std::move(labels);
  return s;
}

// An image of 14-pixel patches, every byte `value`.
DecodedImage image(std::uint32_t grid_h, std::uint32_t grid_w, std::uint8_t value) {
  DecodedImage decoded;
  decoded.grid = {grid_h, grid_w, grid_h * grid_w / 4};
  decoded.height = grid_h * 14;
  decoded.width = grid_w * 14;
  decoded.rgb.assign(std::size_t{decoded.height} * decoded.width * 3, value);
  return decoded;
}

}  // namespace

TEST_CASE("padded collation pads rows to the longest with pad_id, -100 and a zero mask") {
  const auto a = sample(7, {5, 6, 7}, {-100, 6, 7});
  const auto b = sample(9, {8}, {8});
  const std::vector<const SamplePayload*> rows{&a, &b};
  BatchCollator collator({.layout = BatchLayout::padded, .pad_id = 3});
  Batch batch;
  StepInfo info;
  info.sample_ids = {7, 9};
  collator.collate(rows, info, batch);
  CHECK(batch.rows() == 2);
  CHECK(batch.seq_len() == 3);
  CHECK(std::vector(batch.input_ids().begin(), batch.input_ids().end()) ==
        std::vector<std::int32_t>{5, 6, 7, 8, 3, 3});
  CHECK(std::vector(batch.labels().begin(), batch.labels().end()) ==
        std::vector<std::int32_t>{-100, 6, 7, 8, -100, -100});
  CHECK(std::vector(batch.attention_mask().begin(), batch.attention_mask().end()) ==
        std::vector<std::uint8_t>{1, 1, 1, 1, 0, 0});
  CHECK(batch.cu_seqlens().empty());
  CHECK(batch.step_info().sample_ids == std::vector<SampleId>{7, 9});
}

TEST_CASE("packed collation concatenates rows with cu_seqlens, positions and masked boundaries") {
  const auto a = sample(1, {5, 6, 7}, {5, 6, 7});
  const auto b = sample(2, {8, 9}, {8, 9});
  const std::vector<const SamplePayload*> rows{&a, &b};
  BatchCollator collator({.layout = BatchLayout::packed});
  Batch batch;
  collator.collate(rows, {}, batch);
  CHECK(batch.seq_len() == 5);
  CHECK(std::vector(batch.input_ids().begin(), batch.input_ids().end()) ==
        std::vector<std::int32_t>{5, 6, 7, 8, 9});
  CHECK(std::vector(batch.labels().begin(), batch.labels().end()) ==
        std::vector<std::int32_t>{-100, 6, 7, -100, 9});
  CHECK(std::vector(batch.cu_seqlens().begin(), batch.cu_seqlens().end()) ==
        std::vector<std::int32_t>{0, 3, 5});
  CHECK(std::vector(batch.position_ids().begin(), batch.position_ids().end()) ==
        std::vector<std::int32_t>{0, 1, 2, 0, 1});
  CHECK(batch.attention_mask().empty());
}

TEST_CASE("images are concatenated with their (1, h, w) grids") {
  auto a = sample(1, {5, 6}, {5, 6});
  a.images.push_back(image(2, 2, 4));
  auto b = sample(2, {7}, {7});
  b.images.push_back(image(4, 2, 9));
  const std::vector<const SamplePayload*> rows{&a, &b};
  Batch batch;
  BatchCollator({.layout = BatchLayout::padded}).collate(rows, {}, batch);
  CHECK(batch.pixel_values().size() == (28 * 28 + 56 * 28) * 3);
  CHECK(batch.pixel_values()[0] == 4);
  CHECK(batch.pixel_values().back() == 9);
  CHECK(std::vector(batch.image_grid_thw().begin(), batch.image_grid_thw().end()) ==
        std::vector<std::int32_t>{1, 2, 2, 1, 4, 2});
}

TEST_CASE("an IDLE batch has exactly one supervised target after the shift") {
  for (auto layout : {BatchLayout::padded, BatchLayout::packed}) {
    Batch batch;
    StepInfo info;
    info.idle = true;
    BatchCollator({.layout = layout, .idle_token = 11}).collate_idle(info, batch);
    CHECK(batch.rows() == 1);
    CHECK(std::vector(batch.input_ids().begin(), batch.input_ids().end()) ==
          std::vector<std::int32_t>{11, 11});
    CHECK(std::vector(batch.labels().begin(), batch.labels().end()) ==
          std::vector<std::int32_t>{-100, 11});
    CHECK(batch.step_info().idle);
  }
}

TEST_CASE("a recycled batch is refilled completely") {
  const auto big = sample(1, {1, 2, 3, 4}, {1, 2, 3, 4});
  const auto small = sample(2, {5}, {5});
  Batch batch;
  BatchCollator collator({.layout = BatchLayout::padded});
  const std::vector<const SamplePayload*> first{&big, &big};
  collator.collate(first, {}, batch);
  const std::vector<const SamplePayload*> second{&small};
  collator.collate(second, {}, batch);
  CHECK(batch.rows() == 1);
  CHECK(batch.input_ids().size() == 1);
  CHECK(batch.attention_mask().size() == 1);
}

namespace {

// A uint8 image of 14-pixel patches whose bytes vary with position and `seed`.
DecodedImage varied_image(std::uint32_t grid_h, std::uint32_t grid_w, std::uint32_t seed) {
  DecodedImage decoded = image(grid_h, grid_w, 0);
  for (std::size_t i = 0; i < decoded.rgb.size(); ++i)
    decoded.rgb[i] = static_cast<std::uint8_t>((i * 7 + seed * 13 + i / 97) % 256);
  return decoded;
}

CollatorOptions pixel_values_options(PixelDtype dtype, std::size_t threads) {
  CollatorOptions options{.layout = BatchLayout::packed};
  options.pixel_values.dtype = dtype;
  options.pixel_threads = threads;
  return options;
}

}  // namespace

TEST_CASE("pixel_values batches are made from uint8 images, the writer's bytes on any threads") {
  SamplePayload a = sample(1, {5}, {5});
  a.images.push_back(varied_image(2, 2, 1));
  SamplePayload b = sample(2, {6}, {6});
  b.images.push_back(varied_image(4, 2, 2));
  b.images.push_back(varied_image(6, 4, 3));
  const std::vector<const SamplePayload*> rows{&a, &b};
  for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
    CAPTURE(to_string(dtype));
    const CollatorOptions one_thread = pixel_values_options(dtype, 1);
    const PixelValuesWriter writer(one_thread.pixel_values, one_thread.geometry);
    std::vector<std::uint8_t> expected;
    for (const auto* row : rows)
      for (const auto& image : row->images) {
        std::vector<std::uint8_t> values(writer.bytes_for(image.width, image.height));
        writer.write(image.rgb, image.width, image.height, values);
        expected.insert(expected.end(), values.begin(), values.end());
      }
    for (const std::size_t threads : {1, 2, 5}) {
      CAPTURE(threads);
      BatchCollator collator(pixel_values_options(dtype, threads));
      Batch batch;
      for (int twice = 0; twice < 2; ++twice) {  // a recycled batch is rewritten whole
        collator.collate(rows, {}, batch);
        CHECK(batch.pixel_dtype() == dtype);
        CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{4 + 8 + 24, 1176});
        REQUIRE(batch.pixel_values().size() == expected.size());
        CHECK(
            std::equal(batch.pixel_values().begin(), batch.pixel_values().end(), expected.begin()));
        CHECK(batch.image_grid_thw().size() == 9);
      }

      // No image, and IDLE: no rows, the same dtype and row width.
      const SamplePayload text = sample(3, {7}, {7});
      collator.collate(std::vector<const SamplePayload*>{&text}, {}, batch);
      CHECK(batch.pixel_values().empty());
      CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{0, 1176});
      collator.collate_idle({}, batch);
      CHECK(batch.pixel_dtype() == dtype);
      CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{0, 1176});
    }
  }
}

TEST_CASE("uint8 batches are shaped (pixels, 3), and images that are not uint8 RGB are refused") {
  SamplePayload a = sample(1, {5}, {5});
  a.images.push_back(image(2, 2, 4));
  BatchCollator uint8({.layout = BatchLayout::packed});
  Batch batch;
  uint8.collate(std::vector<const SamplePayload*>{&a}, {}, batch);
  CHECK(batch.pixel_dtype() == PixelDtype::uint8);
  CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{28 * 28, 3});
  CHECK(batch.pixel_values().size() == 28 * 28 * 3);
  CHECK(batch.pixel_values()[0] == 4);

  SamplePayload short_rgb = sample(2, {6}, {6});
  short_rgb.images.push_back(image(2, 2, 1));
  short_rgb.images.back().rgb.pop_back();
  SamplePayload made = sample(3, {6}, {6});
  made.images.push_back(image(2, 2, 1));
  made.images.back().dtype = PixelDtype::float32;
  for (const auto* bad : {&short_rgb, &made}) {
    CHECK_THROWS_AS(uint8.collate(std::vector<const SamplePayload*>{bad}, {}, batch),
                    std::invalid_argument);
    BatchCollator float32(pixel_values_options(PixelDtype::float32, 2));
    CHECK_THROWS_AS(float32.collate(std::vector<const SamplePayload*>{bad}, {}, batch),
                    std::invalid_argument);
  }
  CHECK_THROWS_AS(BatchCollator(pixel_values_options(PixelDtype::float32, 0)),
                  std::invalid_argument);
  CollatorOptions odd_patch = pixel_values_options(PixelDtype::float32, 1);
  odd_patch.geometry.patch_size = 0;
  CHECK_THROWS_AS(BatchCollator{odd_patch}, ConfigError);
}

TEST_CASE("a pooled batch keeps pixel buffers up to kKeptPixelBytes and gives larger ones back") {
  const auto pool = BatchPool::create();
  BatchCollator collator(pixel_values_options(PixelDtype::float32, 2));
  // 24 bytes a pixel in float32: 18 x 18 patches (252 x 252 pixels) take 1.5 MB, 64 x 64 (896 x
  // 896) 19 MB.
  for (const std::uint32_t side : {18, 64}) {
    CAPTURE(side);
    SamplePayload s = sample(1, {5}, {5});
    s.images.push_back(varied_image(side, side, 1));
    const std::size_t bytes = std::size_t{side} * side * 1176 * 4;
    const Batch* first = nullptr;
    {
      const auto batch = pool->acquire();
      first = batch.get();
      collator.collate(std::vector<const SamplePayload*>{&s}, {}, *batch);
      REQUIRE(batch->pixel_values().size() == bytes);
    }
    const auto again = pool->acquire();
    REQUIRE(again.get() == first);
    CHECK(again->pixel_values_capacity() == (bytes <= BatchPool::kKeptPixelBytes ? bytes : 0));
  }
}
