#pragma once
// `odbatch plan`: shows the round plan(s) the batching rules produce for a JSON scenario, so a
// user can see why their batches look the way they do.
#include <filesystem>
#include <optional>

#include "odbatch/core/config.hpp"

namespace odbatch::cli {

struct PlanOptions {
  std::filesystem::path scenario;
  std::optional<std::filesystem::path>
      config_file;                              // its [batching] table overrides the scenario's
  std::optional<Policy> policy;                 // overrides both
  std::optional<std::filesystem::path> output;  // stdout when absent
  bool summary = false;  // print a text summary; the JSON report goes to `output` only
};

// Writes the report and returns the exit status: 0 success, 1 the epoch run or its audit failed
// (the report is still written), 2 bad input (one line on stderr, no report).
int run_plan_command(const PlanOptions& options);

}  // namespace odbatch::cli
