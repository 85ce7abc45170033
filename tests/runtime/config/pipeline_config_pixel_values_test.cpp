// The [images] table's pixel_values settings: read, defaulted, refused with the key's name, and
// part of the settings a checkpoint and the ranks compare.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"

using namespace odbatch;

namespace {

constexpr std::string_view kMinimal = R"(
[source]
files = ["train.jsonl"]

[tokenizer]
model = "spm.model"

[images]
)";

PipelineConfig parse(const std::string& images) {
  return PipelineConfig::from_toml(std::string(kMinimal) + images, "p.toml", "/base");
}

std::string error_of(const std::string& images) {
  try {
    parse(images);
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

bool names(const std::string& error, const std::string& text) {
  return error.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("pixel_values default to uint8 with Qwen2-VL's processor settings") {
  const auto c = parse("");
  CHECK(c.images.pixel_values == PixelValuesConfig{});
  CHECK(c.images.pixel_values.dtype == PixelDtype::uint8);
  CHECK(c.images.pixel_values.rescale_factor == 1.0 / 255.0);
  CHECK(c.images.pixel_values.image_mean[0] == 0.48145466);
  CHECK(c.images.pixel_values.image_std[2] == 0.27577711);
  CHECK(c.images.pixel_values.temporal_patch_size == 2);
}

TEST_CASE("the pixel_values keys of [images] are read") {
  const auto c = parse(R"(pixel_values = "bfloat16"
rescale_factor = 0.00392156862745098
image_mean = [0.5, 0.5, 0.5]
image_std = [0.5, 1, 0.25]
temporal_patch_size = 1
)");
  const auto& p = c.images.pixel_values;
  CHECK(p.dtype == PixelDtype::bfloat16);
  CHECK(p.rescale_factor == 1.0 / 255.0);  // the JSON's digits give Python's 1/255
  CHECK(p.image_mean == std::array<double, 3>{0.5, 0.5, 0.5});
  CHECK(p.image_std == std::array<double, 3>{0.5, 1.0, 0.25});
  CHECK(p.temporal_patch_size == 1);
  CHECK(parse("pixel_values = \"float32\"\n").images.pixel_values.dtype == PixelDtype::float32);
  for (const char* key : {"images.pixel_values", "images.rescale_factor", "images.image_mean",
                          "images.image_std", "images.temporal_patch_size"}) {
    const auto keys = pipeline_config_keys();
    CHECK_MESSAGE(std::find(keys.begin(), keys.end(), key) != keys.end(), key);
  }
}

TEST_CASE("bad pixel_values settings are errors naming the key") {
  const auto dtype = error_of("pixel_values = \"float16\"\n");
  CHECK(names(dtype, "images.pixel_values"));
  CHECK(names(dtype, "uint8, float32, bfloat16"));
  CHECK(names(error_of("image_mean = [0.5, 0.5]\n"), "images.image_mean"));
  CHECK(names(error_of("image_mean = [0.5, \"a\", 0.5]\n"), "images.image_mean"));
  CHECK(names(error_of("image_std = 0.5\n"), "images.image_std"));
  const auto zero_std = error_of("image_std = [0.5, 0.0, 0.5]\n");
  CHECK(names(zero_std, "images.image_std"));
  CHECK(names(zero_std, "image_std[1]"));
  CHECK(names(error_of("rescale_factor = -1.0\n"), "images.rescale_factor"));
  CHECK(names(error_of("rescale_factor = \"1/255\"\n"), "images.rescale_factor"));
  CHECK(names(error_of("temporal_patch_size = 0\n"), "images.temporal_patch_size"));
  CHECK(names(error_of("temporal_patch_size = 17\n"), "images.temporal_patch_size"));
}
