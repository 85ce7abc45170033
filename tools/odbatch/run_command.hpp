#pragma once
// `odbatch run`: runs the pipeline of a TOML file standalone, consuming batches as fast as they
// come, with a progress line and a summary (samples, rejections by reason, batches, padding,
// throughput, per-stage CPU time and time blocked).
#include <cstdint>
#include <filesystem>
#include <optional>

namespace odbatch::cli {

struct SaveStateAt {
  std::uint64_t steps = 0;  // in all, over the epochs of this run
  std::filesystem::path file;
};

struct RunOptions {
  std::filesystem::path config;
  std::uint64_t epochs = 1;
  std::uint64_t first_epoch = 0;
  std::optional<std::uint64_t> max_steps;           // depart after this many steps in all
  std::optional<SaveStateAt> save_state;            // save a checkpoint there, then depart
  std::optional<std::filesystem::path> resume;      // a checkpoint to go on from
  std::optional<std::filesystem::path> ledger;      // see `odbatch audit`
  std::optional<std::filesystem::path> json;        // the summary as JSON
  std::optional<std::filesystem::path> stats_json;  // Pipeline::stats_json() at the end
  bool progress = true;
};

// Returns the exit status: 0 success, 1 the pipeline failed, 2 bad configuration.
int run_pipeline_command(const RunOptions& options);

}  // namespace odbatch::cli
