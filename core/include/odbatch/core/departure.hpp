#pragma once
// Announced departures (PROTOCOL.md §Failures): a rank that stops at an agreed step, e.g. at
// max_steps, says where it stopped; leaving is a failure only when the ranks do not agree on it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace odbatch {

// Where a rank stops: after `steps` batches of epoch `epoch`.
struct Departure {
  std::uint64_t epoch = 0;
  std::uint64_t steps = 0;

  friend bool operator==(const Departure&, const Departure&) = default;
};

// "step S of epoch E", for messages.
std::string describe(const Departure& departure);

// The store's text of a departure, "E S", and back; nothing for any other text.
std::string encode_departure(const Departure& departure);
std::optional<Departure> decode_departure(std::string_view text);

// Every rank's departure, indexed by rank: the first disagreement with rank 0's, naming both
// ranks and steps, or nothing when all agree.
std::optional<std::string> departure_disagreement(std::span<const Departure> by_rank);

}  // namespace odbatch
