#pragma once
// `odbatch simulate`: compares, on the same shards of one epoch, fixed-batch Standard training,
// the offline token-budget oracles GMT and BMT, and online dynamic batching under the `reference`
// and `balanced` policies, timed by the step cost model (docs/simulation.md). Every number it
// prints is simulated. Prints a table and optionally writes the whole report as JSON and a chart
// drawn by gnuplot (--plot).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"

namespace odbatch::cli {

struct SimulateOptions {
  // Exactly one: a length trace (`odbatch stats --trace`) or a distribution spec:
  //   lognormal:mean=M,cv=C
  //   bimodal:short_mean=M,short_cv=C,long_mean=M,long_cv=C,short_weight=W
  std::optional<std::filesystem::path> trace;
  std::optional<std::string> distribution;
  std::uint64_t samples = 100000;  // drawn from a distribution
  std::string name;                // the workload's name in the report; empty: the trace or spec
  std::uint32_t ranks = 8;         // all data-parallel ranks
  std::uint32_t nodes = 1;         // nodes they span (dividing ranks)
  std::uint32_t token_budget = 12288;
  BudgetMode budget_mode = BudgetMode::padded;
  std::uint32_t window = 1024;
  std::uint32_t max_seq_len = 16384;   // cap of drawn lengths
  Warmup warmup = Warmup::short_ramp;  // of the balanced policy
  Warmup reference_warmup = Warmup::linear;
  std::string model = "2b";                // cost model preset
  std::optional<std::string> calibration;  // "N1:T1,N2:T2": samples per rank-step, seconds
  std::vector<std::uint32_t> batch_sizes{1, 2, 4, 8};  // Standard's
  std::uint32_t buckets_per_octave = 4;                // BMT's
  std::uint64_t seed = 1;
  std::optional<std::filesystem::path> json;
  // A .svg or .png chart: each schedule's speedup over Standard and its padding efficiency.
  std::optional<std::filesystem::path> plot;
};

// Returns the exit status: 0 every schedule emitted every sample once with equal steps on every
// rank, 1 one did not (the table says which), 2 bad input.
int run_simulate_command(const SimulateOptions& options);

}  // namespace odbatch::cli
