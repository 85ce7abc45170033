#pragma once
// A rank's round proposal: what it tells every other rank before the round's plan is computed.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/run_settings.hpp"

namespace odbatch {

// ACTIVE: more input may come; DRAINING: input exhausted, window not empty; DONE: both empty.
enum class RankState : std::uint8_t { active = 0, draining = 1, done = 2 };
std::string_view to_string(RankState state);

// One window sample as proposed: costs only (ids stay local to the rank).
struct ProposedSample {
  std::uint32_t tokens = 0;
  std::uint32_t labels = 0;
  std::uint32_t patches = 0;
  std::uint32_t age = 0;

  friend bool operator==(const ProposedSample&, const ProposedSample&) = default;
};

struct Proposal {
  std::uint16_t version = kProtocolVersion;
  std::uint64_t fingerprint = 0;
  std::uint64_t epoch = 0;
  std::uint64_t round = 0;
  RankState state = RankState::active;
  std::uint64_t prev_digest = 0;        // digest of round-1's plan; 0 before round 0
  std::uint32_t entered = 0;            // samples that entered the window since the last round
  std::vector<ProposedSample> samples;  // window order
  // The rank's batch-deciding settings, carried by the first round a rank runs in an epoch (round
  // 0, or the round a resume starts at), so that ranks configured apart fail there, naming the
  // setting; empty in every other round.
  std::vector<RunSetting> settings;

  friend bool operator==(const Proposal&, const Proposal&) = default;
};

// A disagreement found before emitting (PROTOCOL.md, step 5): the run must abort.
struct Divergence {
  std::uint32_t rank = 0;
  std::string field;
  std::string message;
};

// Checks the settings the proposals carry (when any does: all must, with equal values), then every
// proposal's header against `expected` (this rank's own view) and each proposal's internal
// consistency (state versus window, sample costs). Returns the first problem found; a settings
// mismatch names every differing setting and the ranks on each side, the same on every rank.
std::optional<Divergence> check_proposals(std::span<const Proposal> proposals,
                                          const Proposal& expected, const BatchingConfig& config);

}  // namespace odbatch
