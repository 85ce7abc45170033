#pragma once
// `odbatch stress CONFIG --runs N --ranks W --faults random`: runs the pipeline N times with W
// local ranks as processes, injecting one fault per run: into one rank (ODBATCH_FAULT), or into
// the inputs (one rank configured apart, hostile records). It checks what the protocol promises:
// with a fault, every rank exits non-zero, the others within the fault's abort bound, each error
// naming the cause (the rank, the store, the setting that differs) and the round, and no process
// is left running; with hostile records or none, every rank succeeds, the ledger audit finds no
// problem, and each hostile record is rejected as malformed JSON. A rank that exits 0 while
// another fails fails the run. Run 0 has no fault: it measures the epoch's rounds, among which
// faults are placed.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace odbatch::cli {

struct StressOptions {
  std::filesystem::path config;  // pipeline TOML; its [distributed] and round_timeout_ms apply
  std::uint32_t runs = 10;
  std::uint32_t ranks = 2;
  // random (every kind), none, or kinds separated by commas: the FaultKinds, config_divergence,
  // hostile_records
  std::string faults = "random";
  bool each = false;  // the kinds in turn, rather than drawn at random (rank and round still are)
  std::uint64_t seed = 1;
  // Added to each fault's abort bound: store calls, the flight recorder's file and process exit.
  std::chrono::milliseconds slack{3'000};
  // A run without a fault that takes longer has hung.
  std::chrono::milliseconds run_timeout{600'000};
  std::filesystem::path dir;  // every run's logs and ledgers; empty: a fresh temporary directory
  std::optional<std::filesystem::path> json;
};

// Prints a line per run and the table; returns 0 when every run kept the promises, 1 when one
// did not, 2 for unusable options or config.
int run_stress_command(const StressOptions& options);

}  // namespace odbatch::cli
