#pragma once
// `odbatch stats`: runs one epoch of a pipeline's preprocessing and reports the observed
// post-pipeline lengths (tokens, supervised labels, vision patches): count, mean, CV, percentiles,
// a histogram, and what share of samples various token budgets would leave over budget. Optionally
// writes the lengths as a trace file (length_trace.hpp) for `odbatch simulate --trace`, and a
// histogram chart drawn by gnuplot (--plot).
#include <cstdint>
#include <filesystem>
#include <optional>

namespace odbatch::cli {

struct StatsOptions {
  // A pipeline TOML file, or a JSONL dataset (then tokenizer is required and the pipeline's
  // defaults apply; see docs/simulation.md).
  std::filesystem::path input;
  std::optional<std::filesystem::path> tokenizer;   // JSONL input: the sentencepiece model
  std::optional<std::filesystem::path> image_root;  // JSONL input; default: the file's directory
  std::optional<std::filesystem::path> trace;
  std::optional<std::filesystem::path> json;
  // A .svg or .png chart of the token lengths (log-spaced bins, the budget and window marked).
  std::optional<std::filesystem::path> plot;
  std::uint32_t bins = 20;
};

// Returns the exit status: 0 success, 1 the pipeline failed, 2 bad input or configuration.
int run_stats_command(const StatsOptions& options);

}  // namespace odbatch::cli
