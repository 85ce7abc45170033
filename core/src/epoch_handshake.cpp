#include "odbatch/core/epoch_handshake.hpp"

#include <stdexcept>

namespace odbatch {

HandshakeWords handshake_words(std::uint64_t fingerprint, std::uint64_t steps) {
  return {fingerprint, steps};
}

std::optional<std::string> handshake_disagreement(std::span<const std::uint64_t> gathered,
                                                  bool steps_checked, std::string_view phase) {
  if (gathered.empty() || gathered.size() % kHandshakeWords != 0)
    throw std::invalid_argument("handshake: " + std::to_string(gathered.size()) +
                                " gathered words are not whole ranks' contributions");
  const std::string at = "NCCL handshake at the " + std::string(phase) + ": ";
  const std::uint64_t fingerprint = gathered[0];
  const std::uint64_t steps = gathered[1];
  for (std::size_t rank = 1; rank < gathered.size() / kHandshakeWords; ++rank) {
    const std::uint64_t their_fingerprint = gathered[rank * kHandshakeWords];
    const std::uint64_t their_steps = gathered[rank * kHandshakeWords + 1];
    if (their_fingerprint != fingerprint)
      return at + "rank " + std::to_string(rank) + "'s batching fingerprint " +
             std::to_string(their_fingerprint) + " differs from rank 0's " +
             std::to_string(fingerprint) + ": they do not run the same batching config";
    if (steps_checked && their_steps != steps)
      return at + "rank " + std::to_string(rank) + " ran " + std::to_string(their_steps) +
             " steps, rank 0 " + std::to_string(steps) + ": their collectives are misaligned";
  }
  return std::nullopt;
}

}  // namespace odbatch
