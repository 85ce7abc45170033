#pragma once
// A fault to inject into one rank of a run (ODBATCH_FAULT, `odbatch stress`), what every other
// rank must then do, and how soon. The spec's text form is `kind=KIND,rank=R[,round=K][,ms=T]`.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "odbatch/core/split_mix64.hpp"

namespace odbatch {

enum class FaultKind : std::uint8_t {
  kill,               // SIGKILL at round K
  stop,               // SIGSTOP at round K for T ms (resumed after)
  delay,              // sleep T ms before round K's exchange
  corrupt,            // round K's proposal frame sent with a corrupted magic
  truncate,           // round K's proposal frame sent cut short
  wrong_version,      // round K's proposal frame sent with the next protocol version
  store_unreachable,  // rank 0 stops serving the store at round K
};
std::string_view to_string(FaultKind kind);
std::span<const FaultKind> all_fault_kinds();

struct FaultSpec {
  FaultKind kind = FaultKind::kill;
  std::uint32_t rank = 0;
  std::uint64_t round = 0;  // the rank's K-th exchange, counted from 0 over the whole run
  std::chrono::milliseconds duration{0};  // stop and delay only

  friend bool operator==(const FaultSpec&, const FaultSpec&) = default;
};

// Parses the text form; throws std::invalid_argument naming the bad field. `duration` (ms=) is
// required for stop and delay and refused for the others; store_unreachable needs rank 0, the
// rank that hosts the store.
FaultSpec parse_fault_spec(std::string_view text);
std::string to_string(const FaultSpec& spec);

// The timing a run's abort bound follows from (docs/distributed.md, "How fast a failure stops
// every rank").
struct AbortTiming {
  std::chrono::milliseconds heartbeat_interval{0};
  std::chrono::milliseconds peer_timeout{0};
  std::chrono::milliseconds round_timeout{0};
  std::chrono::milliseconds store_timeout{0};
};

// Whether every rank must fail: a delay shorter than the round timeout only slows the run.
bool fault_fails_run(const FaultSpec& spec, const AbortTiming& timing);

// How long after the fault every other rank has exited, at the latest, not counting a store
// call's own duration: peer_timeout + 2 heartbeats for a dead or stopped rank (a stopped rank 0,
// the store's host, max(peer_timeout, store_timeout + a heartbeat) + 2), round_timeout + 2
// heartbeats for one that holds its round back, store_timeout + 2 heartbeats for a lost store, and
// 2 heartbeats for a bad frame (every rank reads it in the same exchange).
std::chrono::milliseconds abort_bound(const FaultSpec& spec, const AbortTiming& timing);

// When a rank has exited at the latest: the store's host (rank 0) serves the others for up to
// peer_timeout more after an abort, so that they read its cause rather than a lost store.
std::chrono::milliseconds exit_bound(const FaultSpec& spec, const AbortTiming& timing,
                                     bool hosts_store);

// A fault of a kind from `kinds`, on a rank of `world`, at a round below `rounds`; stop and delay
// last long enough to fail the run. Deterministic for a given generator state.
FaultSpec random_fault(SplitMix64& rng, std::span<const FaultKind> kinds, std::uint32_t world,
                       std::uint64_t rounds, const AbortTiming& timing);

}  // namespace odbatch
