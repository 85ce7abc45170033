#pragma once
// The versioned wire encoding of a round proposal: a fixed little-endian header, then each sample
// as four varints (a window of typical samples takes about 6 bytes per sample), then, when the
// header's flags say so, the settings as a varint count and varint-length-prefixed texts. Decoding
// never trusts the frame: every malformed input yields an error, never undefined behaviour, and
// only the one canonical encoding of a proposal decodes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/proposal.hpp"

namespace odbatch {

struct DecodeError {
  std::string message;  // what is wrong and at which byte offset
};

// Upper bounds a decoder accepts: samples (callers pass the configured window bound), and the
// settings section's entries and the bytes of each name or value.
struct DecodeLimits {
  std::uint32_t max_samples = 1u << 24;
  std::uint32_t max_settings = 256;
  std::uint32_t max_setting_bytes = 1u << 20;
};

std::vector<std::byte> encode_proposal(const Proposal& proposal);
void encode_proposal(const Proposal& proposal, std::vector<std::byte>& out);  // reuses `out`

// Exact encoded size of `proposal`, and the largest any proposal with `samples` samples and no
// settings can take.
std::size_t encoded_proposal_size(const Proposal& proposal);
std::size_t max_encoded_proposal_size(std::size_t samples);

// Fills `out` on success; on error returns it and leaves `out` unspecified.
std::optional<DecodeError> decode_proposal(std::span<const std::byte> frame, Proposal& out,
                                           const DecodeLimits& limits = {});

}  // namespace odbatch
