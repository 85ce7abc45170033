// One rank, one epoch over image records with pixel_values = float32 and bfloat16: every batch
// says its dtype and (patches, channels * temporal * patch^2) shape, and holds, image by image,
// exactly the pixel_values of the uint8 pixels the same pipeline emits with the default setting
// (the batches are the same otherwise: pixel_values are made when the emitter collates a planned
// step, from the uint8 pixels the window held, and change nothing else).
#include <doctest/doctest.h>

#include <algorithm>

#include "odbatch/image/pixel_values_writer.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kImageRecords = 24;

std::vector<std::shared_ptr<const Batch>> run(PipelineConfig config, PixelDtype dtype) {
  config.images.pixel_values.dtype = dtype;
  Pipeline pipeline(config, DistEnv::single());
  pipeline.start_epoch(0);
  return test::drain(pipeline);
}

TEST_CASE("a pipeline emits pixel_values of the configured dtype and shape") {
  test::require_dataset();
  const test::TempDir dir;
  const auto image_file = dir.path() / "images.jsonl";
  test::write_jsonl(image_file, test::image_records(kImageRecords, /*wallpapers=*/false));
  auto config = test::small_config({image_file});
  config.images.workers = 2;
  config.flow.layout = BatchLayout::packed;
  config.batching.budget_mode = BudgetMode::packed;

  const auto uint8 = run(config, PixelDtype::uint8);
  REQUIRE(!uint8.empty());
  const auto& geometry = config.images.geometry;
  for (const PixelDtype dtype : {PixelDtype::float32, PixelDtype::bfloat16}) {
    CAPTURE(to_string(dtype));
    const auto batches = run(config, dtype);
    REQUIRE(batches.size() == uint8.size());
    PixelValuesConfig settings;
    settings.dtype = dtype;
    const PixelValuesWriter writer(settings, geometry);
    REQUIRE(writer.values_per_patch() == 1176);
    std::size_t images = 0;
    for (std::size_t b = 0; b < batches.size(); ++b) {
      const Batch& batch = *batches[b];
      const Batch& pixels = *uint8[b];
      CHECK(pixels.pixel_dtype() == PixelDtype::uint8);
      CHECK(batch.pixel_dtype() == dtype);
      REQUIRE(batch.step_info().sample_ids == pixels.step_info().sample_ids);
      const auto grids = batch.image_grid_thw();
      REQUIRE(std::equal(grids.begin(), grids.end(), pixels.image_grid_thw().begin(),
                         pixels.image_grid_thw().end()));
      std::size_t patches = 0;
      for (std::size_t i = 0; i < grids.size(); i += 3)
        patches += static_cast<std::size_t>(grids[i] * grids[i + 1] * grids[i + 2]);
      CHECK(batch.pixel_values_shape() == std::array<std::size_t, 2>{patches, 1176});
      REQUIRE(batch.pixel_values().size() == patches * 1176 * element_bytes(dtype));
      CHECK(pixels.pixel_values_shape() ==
            std::array<std::size_t, 2>{patches * geometry.patch_size * geometry.patch_size, 3});

      // Image by image: the writer on the uint8 batch's pixels gives this batch's bytes.
      const auto expected = test::pixel_values_of(pixels, writer, geometry.patch_size);
      CHECK(std::equal(expected.begin(), expected.end(), batch.pixel_values().begin(),
                       batch.pixel_values().end()));
      images += grids.size() / 3;
    }
    CHECK(images >= kImageRecords);
  }
}

}  // namespace
}  // namespace odbatch
