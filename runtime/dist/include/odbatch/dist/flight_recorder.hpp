#pragma once
// A rank's last rounds, kept in memory and written to a file when the run fails, so that a failed
// or stuck run shows who was behind and where the ranks disagreed: each round's state, window,
// every rank's proposal size, the plan's steps and digest, and how long the exchange and the plan
// took.
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace odbatch {

struct RoundTrace {
  std::uint64_t epoch = 0;
  std::uint64_t round = 0;
  std::string state;  // this rank's: ACTIVE, DRAINING or DONE
  std::uint32_t window_samples = 0;
  std::vector<std::uint64_t> proposal_bytes;  // every rank's; empty when the exchange failed
  std::uint32_t steps = 0;
  std::uint64_t digest = 0;
  bool epoch_over = false;
  double started_seconds = 0;  // since the recorder was made
  double exchange_ms = 0;      // readiness and exchange
  double plan_ms = 0;          // checks and plan
  std::string failure;         // why the round failed; empty when it did not
};

class FlightRecorder {
 public:
  // Keeps the last `capacity` rounds (at least one).
  FlightRecorder(std::uint32_t rank, std::size_t capacity);

  double seconds_since_start() const;
  // Thread-safe.
  void record(RoundTrace record);
  std::vector<RoundTrace> rounds() const;

  // Writes {"rank", "rounds": [...]} as JSON, through a temporary file renamed into place. Throws
  // std::runtime_error naming the path when it cannot.
  void write(const std::filesystem::path& file) const;

 private:
  std::uint32_t rank_;
  std::size_t capacity_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::deque<RoundTrace> rounds_;
};

}  // namespace odbatch
