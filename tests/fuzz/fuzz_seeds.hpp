#pragma once
// The fuzz targets' seed inputs, made from real material: the dataset that tools/prepare-data.sh
// builds in data/ (records, JPEGs, the tokenizer model), the example and documented configs, and
// proposals, checkpoints and store frames that the project's own encoders make of the dataset's
// samples as the pipeline would cost them. tools/fuzz.sh writes them out for libFuzzer
// (odbatch_fuzz_seeds); the replay test runs them through the targets in the normal build.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch::fuzz {

struct Seed {
  std::string name;  // a file name
  std::vector<std::uint8_t> bytes;
};

// The seeds of the target `target` (a name of targets()), from the checkout at `source_dir`.
// Throws std::runtime_error naming the target when `target` is unknown, and the project's errors
// (DatasetError, ConfigFileError, ...) when data/ has not been built.
std::vector<Seed> seeds_for(std::string_view target, const std::filesystem::path& source_dir);

}  // namespace odbatch::fuzz
