#include "odbatch/proto_msgs/proposal_codec.hpp"

#include <array>
#include <limits>
#include <stdexcept>
#include <utility>

#include "odbatch/proto_msgs/little_endian.hpp"

namespace odbatch {
namespace {

// Frame layout; PROTOCOL.md and the header describe the fields.
constexpr std::array<std::byte, 4> kMagic{std::byte{'O'}, std::byte{'D'}, std::byte{'B'},
                                          std::byte{'P'}};
constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kStateOffset = 6;
constexpr std::size_t kReservedOffset = 7;
constexpr std::size_t kFingerprintOffset = 8;
constexpr std::size_t kEpochOffset = 16;
constexpr std::size_t kRoundOffset = 24;
constexpr std::size_t kPrevDigestOffset = 32;
constexpr std::size_t kEnteredOffset = 40;
constexpr std::size_t kSampleCountOffset = 44;
constexpr std::size_t kHeaderSize = 48;
constexpr std::size_t kSampleSize = 16;
static_assert(kSampleCountOffset + sizeof(std::uint32_t) == kHeaderSize);
constexpr std::uint8_t kMaxState = static_cast<std::uint8_t>(RankState::done);

using wire::load_le;
using wire::store_le;

DecodeError error_at(std::string_view field, std::size_t offset, const std::string& what) {
  return DecodeError{std::string(field) + " at byte offset " + std::to_string(offset) + ": " +
                     what};
}

}  // namespace

std::size_t encoded_proposal_size(std::size_t samples) {
  return kHeaderSize + kSampleSize * samples;
}

std::vector<std::byte> encode_proposal(const Proposal& proposal) {
  std::vector<std::byte> out;
  encode_proposal(proposal, out);
  return out;
}

void encode_proposal(const Proposal& proposal, std::vector<std::byte>& out) {
  const std::size_t count = proposal.samples.size();
  // sample_count is a u32 on the wire; a larger window cannot be represented.
  if (count > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("proposal has " + std::to_string(count) +
                            " samples, more than a frame can carry");
  out.resize(encoded_proposal_size(count));
  std::byte* const frame = out.data();
  for (std::size_t i = 0; i < kMagic.size(); ++i) frame[kMagicOffset + i] = kMagic[i];
  store_le(frame + kVersionOffset, proposal.version);
  store_le(frame + kStateOffset, static_cast<std::uint8_t>(proposal.state));
  store_le(frame + kReservedOffset, std::uint8_t{0});
  store_le(frame + kFingerprintOffset, proposal.fingerprint);
  store_le(frame + kEpochOffset, proposal.epoch);
  store_le(frame + kRoundOffset, proposal.round);
  store_le(frame + kPrevDigestOffset, proposal.prev_digest);
  store_le(frame + kEnteredOffset, proposal.entered);
  store_le(frame + kSampleCountOffset, static_cast<std::uint32_t>(count));
  std::byte* record = frame + kHeaderSize;
  for (const ProposedSample& sample : proposal.samples) {
    store_le(record, sample.tokens);
    store_le(record + 4, sample.labels);
    store_le(record + 8, sample.patches);
    store_le(record + 12, sample.age);
    record += kSampleSize;
  }
}

std::optional<DecodeError> decode_proposal(std::span<const std::byte> frame, Proposal& out,
                                           const DecodeLimits& limits) {
  if (frame.size() < kHeaderSize)
    return error_at("header", 0,
                    "frame of " + std::to_string(frame.size()) + " bytes is shorter than the " +
                        std::to_string(kHeaderSize) + "-byte header");
  const std::byte* const data = frame.data();
  for (std::size_t i = 0; i < kMagic.size(); ++i)
    if (data[kMagicOffset + i] != kMagic[i]) return error_at("magic", kMagicOffset + i, "not ODBP");

  const auto version = load_le<std::uint16_t>(data + kVersionOffset);
  if (version != kProtocolVersion)
    return error_at("version", kVersionOffset,
                    "unsupported version " + std::to_string(version) + ", expected " +
                        std::to_string(kProtocolVersion));
  const auto state = load_le<std::uint8_t>(data + kStateOffset);
  if (state > kMaxState)
    return error_at("state", kStateOffset, "unknown state " + std::to_string(state));
  const auto reserved = load_le<std::uint8_t>(data + kReservedOffset);
  if (reserved != 0)
    return error_at("reserved", kReservedOffset, "must be 0, got " + std::to_string(reserved));

  const auto entered = load_le<std::uint32_t>(data + kEnteredOffset);
  const auto count = load_le<std::uint32_t>(data + kSampleCountOffset);
  if (count > limits.max_samples)
    return error_at(
        "sample_count", kSampleCountOffset,
        std::to_string(count) + " exceeds the limit of " + std::to_string(limits.max_samples));
  // In 64 bits: 48 + 16 * (2^32 - 1) cannot overflow, even where size_t is 32 bits wide.
  const std::uint64_t expected_size =
      std::uint64_t{kHeaderSize} + std::uint64_t{kSampleSize} * count;
  if (frame.size() < expected_size)
    return error_at("samples", frame.size(),
                    "frame truncated: " + std::to_string(frame.size()) + " bytes, expected " +
                        std::to_string(expected_size) + " for " + std::to_string(count) +
                        " samples");
  if (frame.size() > expected_size)
    return error_at("samples", expected_size,
                    std::to_string(frame.size() - expected_size) + " trailing bytes after " +
                        std::to_string(count) + " samples");
  if (entered > count)
    return error_at("entered", kEnteredOffset,
                    std::to_string(entered) + " exceeds sample_count " + std::to_string(count));

  out.version = version;
  out.state = static_cast<RankState>(state);
  out.fingerprint = load_le<std::uint64_t>(data + kFingerprintOffset);
  out.epoch = load_le<std::uint64_t>(data + kEpochOffset);
  out.round = load_le<std::uint64_t>(data + kRoundOffset);
  out.prev_digest = load_le<std::uint64_t>(data + kPrevDigestOffset);
  out.entered = entered;
  out.samples.resize(count);
  const std::byte* record = data + kHeaderSize;
  for (ProposedSample& sample : out.samples) {
    sample.tokens = load_le<std::uint32_t>(record);
    sample.labels = load_le<std::uint32_t>(record + 4);
    sample.patches = load_le<std::uint32_t>(record + 8);
    sample.age = load_le<std::uint32_t>(record + 12);
    record += kSampleSize;
  }
  return std::nullopt;
}

}  // namespace odbatch
