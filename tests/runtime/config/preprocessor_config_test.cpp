// [images] preprocessor_config: a model's preprocessor_config.json gives the geometry and the
// pixel_values settings, in Qwen2-VL's layout and in newer files' `size` layout; [images] keys
// beside it win; bad files are named errors with the key and the file.
#include <doctest/doctest.h>

#include <string>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/config/preprocessor_config.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

// Qwen2-VL-7B-Instruct's preprocessor_config.json as the model repository ships it.
constexpr std::string_view kQwen2Vl = R"({
  "min_pixels": 3136,
  "max_pixels": 12845056,
  "patch_size": 14,
  "temporal_patch_size": 2,
  "merge_size": 2,
  "image_mean": [0.48145466, 0.4578275, 0.40821073],
  "image_std": [0.26862954, 0.26130258, 0.27577711],
  "image_processor_type": "Qwen2VLImageProcessor",
  "processor_class": "Qwen2VLProcessor"
})";

// The layout newer transformers versions save: the pixel counts under `size`.
constexpr std::string_view kSizeLayout = R"({
  "do_convert_rgb": true, "do_normalize": true, "do_rescale": true, "do_resize": true,
  "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
  "image_processor_type": "Qwen2VLImageProcessor", "merge_size": 2, "patch_size": 16,
  "resample": 3, "rescale_factor": 0.00392156862745098,
  "size": {"longest_edge": 16777216, "shortest_edge": 65536}, "temporal_patch_size": 2
})";

PipelineConfig config_with(test::ScratchDirectory& dir, const std::string& images_table) {
  const std::string toml =
      "[source]\nfiles = [\"train.jsonl\"]\n[tokenizer]\nmodel = "
      "\"spm.model\"\n[images]\n" +
      images_table;
  return PipelineConfig::from_toml(toml, "p.toml", dir.path());
}

std::string error_of(test::ScratchDirectory& dir, const std::string& images_table) {
  try {
    config_with(dir, images_table);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("Qwen2-VL's preprocessor_config.json sets the geometry and the pixel_values settings") {
  test::ScratchDirectory dir;
  dir.write("preprocessor_config.json", std::string(kQwen2Vl));
  const auto config = config_with(dir, "preprocessor_config = \"preprocessor_config.json\"\n");
  CHECK(config.images.geometry.min_pixels == 3136);
  CHECK(config.images.geometry.max_pixels == 12'845'056);
  CHECK(config.images.geometry.patch_size == 14);
  CHECK(config.images.geometry.merge_size == 2);
  CHECK(config.images.pixel_values.temporal_patch_size == 2);
  CHECK(config.images.pixel_values.image_mean[0] == 0.48145466);
  CHECK(config.images.pixel_values.image_std[2] == 0.27577711);
  CHECK(config.images.pixel_values.rescale_factor == 1.0 / 255.0);  // not in the file: default
}

TEST_CASE("the size layout gives the pixel counts, and [images] keys beside the file win") {
  test::ScratchDirectory dir;
  dir.write("pp.json", std::string(kSizeLayout));
  const auto config = config_with(
      dir, "max_pixels = 1003520\npreprocessor_config = \"pp.json\"\npatch_size = 14\n");
  CHECK(config.images.geometry.min_pixels == 65'536);
  CHECK(config.images.geometry.max_pixels == 1'003'520);  // [images], before the file's key
  CHECK(config.images.geometry.patch_size == 14);         // [images], after it
  CHECK(config.images.geometry.merge_size == 2);
  CHECK(config.images.pixel_values.image_mean == std::array<double, 3>{0.5, 0.5, 0.5});
  CHECK(config.images.pixel_values.rescale_factor == 0.00392156862745098);
}

TEST_CASE("do_rescale and do_normalize false mean a factor of 1 and a mean of 0, std 1") {
  test::ScratchDirectory dir;
  const auto values = read_preprocessor_config(dir.write(
      "pp.json", R"({"do_rescale": false, "do_normalize": false, "image_mean": [0.1, 0.2, 0.3]})"));
  CHECK(values.rescale_factor == 1.0);
  CHECK(values.image_mean == std::array<double, 3>{0, 0, 0});
  CHECK(values.image_std == std::array<double, 3>{1, 1, 1});
  CHECK_FALSE(values.max_pixels.has_value());
}

TEST_CASE("a bad preprocessor file is a named error: the key in the TOML, the file, the value") {
  test::ScratchDirectory dir;
  const auto missing = error_of(dir, "preprocessor_config = \"absent.json\"\n");
  CHECK(missing.find("p.toml:6") != std::string::npos);
  CHECK(missing.find("images.preprocessor_config: ") != std::string::npos);
  CHECK(missing.find("absent.json") != std::string::npos);
  dir.write("broken.json", "{\"patch_size\": 14,");
  CHECK(error_of(dir, "preprocessor_config = \"broken.json\"\n")
            .find("broken.json: not valid JSON") != std::string::npos);
  dir.write("two.json", R"({"image_mean": [0.5, 0.5]})");
  CHECK(error_of(dir, "preprocessor_config = \"two.json\"\n")
            .find("two.json: image_mean: expected 3 numbers (R, G, B), got [0.5,0.5]") !=
        std::string::npos);
  dir.write("zero.json", R"({"size": {"longest_edge": 0}})");
  CHECK(error_of(dir, "preprocessor_config = \"zero.json\"\n")
            .find("zero.json: longest_edge: expected a whole number from 1 to 1073741824, got 0") !=
        std::string::npos);
  CHECK(error_of(dir, "preprocessor_config = \"/dev/zero\"\n")
            .find("/dev/zero: not a regular file") != std::string::npos);
  // Values that read but do not fit together fail validation, naming the setting.
  dir.write("small.json", R"({"max_pixels": 100})");
  CHECK(error_of(dir, "preprocessor_config = \"small.json\"\n").find("max_pixels") !=
        std::string::npos);
}

}  // namespace odbatch
