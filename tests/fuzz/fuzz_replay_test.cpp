// The fuzz targets' inputs replayed through the fuzzers' own entry points in the normal build (and
// under ASan+UBSan in CI): the seeds made from the real dataset, and every committed regression
// input, tests/fuzz/regressions/<target>/*, each an input that once broke its target.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_entries.hpp"
#include "fuzz_seeds.hpp"
#include "test_skip.hpp"

namespace odbatch::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = ODBATCH_SOURCE_DIR;
const fs::path kRegressions = kSourceDir / "tests/fuzz/regressions";

const Target& target_named(std::string_view name) {
  const auto targets = fuzz::targets();
  const auto found = std::ranges::find(targets, name, &Target::name);
  REQUIRE_MESSAGE(found != targets.end(), "no fuzz target " << name);
  return *found;
}

bool dataset_built() {
  return fs::exists(kSourceDir / "data/MANIFEST.json");
}

// Runs the seeds; returns how many the target accepted.
std::size_t replay_seeds(const Target& target) {
  const auto seeds = seeds_for(target.name, kSourceDir);
  REQUIRE_FALSE(seeds.empty());
  std::size_t accepted = 0;
  for (const Seed& seed : seeds) {
    INFO(target.name << " seed " << seed.name);
    if (target.entry(seed.bytes) == Outcome::accepted) ++accepted;
  }
  MESSAGE(target.name << ": " << accepted << " of " << seeds.size() << " seeds accepted");
  return accepted;
}

std::vector<std::uint8_t> file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("fuzz seeds: every proposal and checkpoint encoded from the real dataset is accepted") {
  if (!dataset_built()) {
    ODBATCH_SKIP_TEST("dataset", "the dataset is not built (tools/prepare-data.sh)");
  }
  // The checkpoint seeds include bare bodies, which the target wraps as checkpoint_codec.cpp does:
  // their acceptance keeps the wrapper in step with the file format.
  for (const auto name : {"proposal_frame", "checkpoint_file"}) {
    const Target& target = target_named(name);
    CHECK(replay_seeds(target) == seeds_for(name, kSourceDir).size());
  }
}

TEST_CASE("fuzz seeds: every target accepts some of its seeds and breaks on none") {
  if (!dataset_built()) {
    ODBATCH_SKIP_TEST("dataset", "the dataset is not built (tools/prepare-data.sh)");
  }
  for (const Target& target : targets()) {
    INFO(target.name);
    CHECK(replay_seeds(target) > 0);
  }
}

TEST_CASE("fuzz regressions: no committed input breaks its target") {
  std::size_t replayed = 0;
  if (fs::exists(kRegressions)) {
    for (const auto& dir : fs::directory_iterator(kRegressions)) {
      const Target& target = target_named(dir.path().filename().string());
      std::vector<fs::path> inputs;
      for (const auto& file : fs::directory_iterator(dir.path())) inputs.push_back(file.path());
      std::ranges::sort(inputs);
      for (const auto& input : inputs) {
        INFO(input.string());
        target.entry(file_bytes(input));
        ++replayed;
      }
    }
  }
  MESSAGE(replayed << " regression inputs replayed");
}

}  // namespace odbatch::fuzz
