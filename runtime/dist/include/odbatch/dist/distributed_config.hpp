#pragma once
// How ranks coordinate ([distributed] in the pipeline TOML): how liveness is judged and how long
// each kind of wait may last, which together bound how fast a failure stops every rank
// (docs/distributed.md, "How fast a failure stops every rank"), and the flight recorder.
#include <chrono>
#include <cstdint>
#include <filesystem>

namespace odbatch {

struct DistributedConfig {
  // How often a rank's heartbeat counter goes up and the abort key is looked at.
  std::chrono::milliseconds heartbeat_interval{1'000};
  // A peer whose heartbeat counter has not moved for this long is dead.
  std::chrono::milliseconds peer_timeout{30'000};
  // Connecting to the store and building the Gloo mesh: every rank must have started within it.
  std::chrono::milliseconds connect_timeout{120'000};
  // How long one store call may take.
  std::chrono::milliseconds store_timeout{30'000};
  // The Gloo exchange once every rank is ready: only the network can hold it up.
  std::chrono::milliseconds exchange_timeout{60'000};
  // The last this many rounds are kept (0: none) and written when the run fails, to
  // flight_recorder_dir/odbatch-flight-rank<R>.json (empty: the user's state directory,
  // $XDG_STATE_HOME or ~/.local/state, in odbatch/flight; docs/distributed.md).
  std::uint32_t flight_recorder_rounds = 64;
  std::filesystem::path flight_recorder_dir;
};

// Throws ConfigError naming the field ("heartbeat_interval_ms", ...) of a zero timeout or a
// peer_timeout shorter than two heartbeat intervals.
void validate(const DistributedConfig& config);

}  // namespace odbatch
