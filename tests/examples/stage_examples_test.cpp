// The stage examples as their pipeline files describe them (examples/stages/), with each plugin as
// this build made it: the quality filter rejects short answers as quality:too_short, the flip
// keeps every sample and its grid.
#include <doctest/doctest.h>

#include "odbatch/actors/pipeline.hpp"

namespace odbatch {
namespace {

// The example's pipeline file with its plugin from this build, over its first `steps` steps.
StatsSnapshot run_example(const std::string& file, const char* plugin, int steps) {
  auto config =
      PipelineConfig::from_toml_file(std::string(ODBATCH_EXAMPLES_DIR) + "/stages/" + file);
  REQUIRE(config.stages.size() == 1);
  config.stages[0].plugin = plugin;
  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  for (int step = 0; step < steps; ++step) REQUIRE(pipeline.next_batch());
  return pipeline.stats();
}

}  // namespace

TEST_CASE("the quality filter example rejects short answers by its plugin's reason") {
  const auto stats = run_example("quality_filter.toml", ODBATCH_QUALITY_FILTER, 20);
  CHECK(stats.rejected_by_reason.at("quality:too_short") > 0);
  CHECK(stats.rejected_by_reason.size() == 1);
}

TEST_CASE("the random flip example keeps every sample") {
  const auto stats = run_example("random_flip.toml", ODBATCH_RANDOM_FLIP, 10);
  CHECK(stats.samples_rejected == 0);
  CHECK(stats.samples_emitted > 0);
}

}  // namespace odbatch
