#pragma once
// The epoch handshake on the trainer's own communicator (ARCHITECTURE.md): at an epoch's start
// every rank contributes its batching fingerprint, and at its end also its step count, to one
// allgather; every rank then checks that all agree, and a disagreement names the ranks. Pure: the
// allgather itself is the caller's (NCCL on the trainer's stream).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace odbatch {

// One rank's contribution, as the allgather carries it: [fingerprint, steps].
inline constexpr std::size_t kHandshakeWords = 2;
using HandshakeWords = std::array<std::uint64_t, kHandshakeWords>;

HandshakeWords handshake_words(std::uint64_t fingerprint, std::uint64_t steps);

// What the gathered words (rank after rank) say, or nothing when every rank agreed. `phase` names
// the moment ("start of epoch 3"), `steps_checked` whether step counts take part (not at an
// epoch's start).
std::optional<std::string> handshake_disagreement(std::span<const std::uint64_t> gathered,
                                                  bool steps_checked, std::string_view phase);

}  // namespace odbatch
