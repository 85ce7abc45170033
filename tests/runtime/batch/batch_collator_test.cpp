#include <doctest/doctest.h>

#include <array>
#include <stdexcept>
#include <vector>

#include "odbatch/batch/batch_collator.hpp"

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
  BatchCollator collator({BatchLayout::padded, /*pad_id=*/3, /*idle_token=*/0});
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
  BatchCollator collator({BatchLayout::packed, 0, 0});
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
  BatchCollator({BatchLayout::padded, 0, 0}).collate(rows, {}, batch);
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
    BatchCollator({layout, 0, 11}).collate_idle(info, batch);
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
  BatchCollator collator({BatchLayout::padded, 0, 0});
  const std::vector<const SamplePayload*> first{&big, &big};
  collator.collate(first, {}, batch);
  const std::vector<const SamplePayload*> second{&small};
  collator.collate(second, {}, batch);
  CHECK(batch.rows() == 1);
  CHECK(batch.input_ids().size() == 1);
  CHECK(batch.attention_mask().size() == 1);
}

namespace {

// An image's pixel_values: grid_h * grid_w patches of `per_patch` bfloat16 values, every byte
// `value`.
DecodedImage patch_image(std::uint32_t grid_h, std::uint32_t grid_w, std::uint32_t per_patch,
                         std::uint8_t value) {
  DecodedImage decoded;
  decoded.grid = {grid_h, grid_w, grid_h * grid_w / 4};
  decoded.height = grid_h * 14;
  decoded.width = grid_w * 14;
  decoded.dtype = PixelDtype::bfloat16;
  decoded.values_per_patch = per_patch;
  decoded.patch_values.assign(std::size_t{grid_h} * grid_w * per_patch * 2, value);
  return decoded;
}

}  // namespace

TEST_CASE("pixel_values batches say their dtype and (patches, values per patch) shape") {
  SamplePayload a = sample(1, {5}, {5});
  a.images.push_back(patch_image(2, 2, 1176, 4));
  SamplePayload b = sample(2, {6}, {6});
  b.images.push_back(patch_image(4, 2, 1176, 9));
  const std::vector<const SamplePayload*> rows{&a, &b};
  BatchCollator collator({BatchLayout::packed, 0, 0, PixelDtype::bfloat16, 1176});
  Batch batch;
  collator.collate(rows, {}, batch);
  CHECK(batch.pixel_dtype() == PixelDtype::bfloat16);
  CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{12, 1176});
  REQUIRE(batch.pixel_values().size() == 12 * 1176 * 2);
  CHECK(batch.pixel_values()[4 * 1176 * 2 - 1] == 4);
  CHECK(batch.pixel_values()[4 * 1176 * 2] == 9);

  // No image, and IDLE: no rows, the same dtype and row width.
  const SamplePayload text = sample(3, {7}, {7});
  collator.collate(std::vector<const SamplePayload*>{&text}, {}, batch);
  CHECK(batch.pixel_values().empty());
  CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{0, 1176});
  collator.collate_idle({}, batch);
  CHECK(batch.pixel_dtype() == PixelDtype::bfloat16);
  CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{0, 1176});
}

TEST_CASE("uint8 batches are shaped (pixels, 3) and images of another dtype are refused") {
  SamplePayload a = sample(1, {5}, {5});
  a.images.push_back(image(2, 2, 4));
  BatchCollator uint8({BatchLayout::packed, 0, 0});
  Batch batch;
  uint8.collate(std::vector<const SamplePayload*>{&a}, {}, batch);
  CHECK(batch.pixel_dtype() == PixelDtype::uint8);
  CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{28 * 28, 3});

  BatchCollator float32({BatchLayout::packed, 0, 0, PixelDtype::float32, 1176});
  CHECK_THROWS_AS(float32.collate(std::vector<const SamplePayload*>{&a}, {}, batch),
                  std::invalid_argument);
  SamplePayload b = sample(2, {6}, {6});
  b.images.push_back(patch_image(2, 2, 588, 1));
  CHECK_THROWS_AS(BatchCollator({BatchLayout::packed, 0, 0, PixelDtype::bfloat16, 1176})
                      .collate(std::vector<const SamplePayload*>{&b}, {}, batch),
                  std::invalid_argument);
  CHECK_THROWS_AS(BatchCollator({BatchLayout::packed, 0, 0, PixelDtype::float32, 0}),
                  std::invalid_argument);
}
