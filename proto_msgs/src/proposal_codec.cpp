#include "odbatch/proto_msgs/proposal_codec.hpp"

#include <array>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "odbatch/proto_msgs/little_endian.hpp"
#include "odbatch/proto_msgs/varint.hpp"

namespace odbatch {
namespace {

// Frame layout; PROTOCOL.md and the header describe the fields.
constexpr std::array<std::byte, 4> kMagic{std::byte{'O'}, std::byte{'D'}, std::byte{'B'},
                                          std::byte{'P'}};
constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kStateOffset = 6;
constexpr std::size_t kFlagsOffset = 7;
constexpr std::size_t kFingerprintOffset = 8;
constexpr std::size_t kEpochOffset = 16;
constexpr std::size_t kRoundOffset = 24;
constexpr std::size_t kPrevDigestOffset = 32;
constexpr std::size_t kEnteredOffset = 40;
constexpr std::size_t kSampleCountOffset = 44;
constexpr std::size_t kHeaderSize = 48;
// A sample is four varints (tokens, labels, patches, age): 4 to 20 bytes.
constexpr std::size_t kSampleFields = 4;
constexpr std::size_t kMinSampleSize = kSampleFields;
constexpr std::size_t kMaxSampleSize = kSampleFields * wire::kMaxVarint32Size;
constexpr std::array<std::string_view, kSampleFields> kSampleFieldNames{"tokens", "labels",
                                                                        "patches", "age"};
static_assert(kSampleCountOffset + sizeof(std::uint32_t) == kHeaderSize);
// Flags: a settings section follows the samples (set exactly when there are settings).
constexpr std::uint8_t kHasSettings = 0x01;
// A settings section is a varint count, then each setting's name and value as varint length and
// bytes.
constexpr std::uint8_t kMaxState = static_cast<std::uint8_t>(RankState::done);

using wire::load_le;
using wire::store_le;

std::array<std::uint32_t, kSampleFields> fields_of(const ProposedSample& sample) {
  return {sample.tokens, sample.labels, sample.patches, sample.age};
}

DecodeError error_at(std::string_view field, std::size_t offset, const std::string& what) {
  return DecodeError{std::string(field) + " at byte offset " + std::to_string(offset) + ": " +
                     what};
}

std::size_t text_size(const std::string& text) {
  return wire::varint32_size(static_cast<std::uint32_t>(text.size())) + text.size();
}

std::size_t settings_size(const std::vector<RunSetting>& settings) {
  if (settings.empty()) return 0;
  std::size_t size = wire::varint32_size(static_cast<std::uint32_t>(settings.size()));
  for (const RunSetting& setting : settings)
    size += text_size(setting.name) + text_size(setting.value);
  return size;
}

std::byte* store_text(std::byte* at, const std::string& text) {
  at = wire::store_varint32(at, static_cast<std::uint32_t>(text.size()));
  for (const char c : text) *at++ = static_cast<std::byte>(c);
  return at;
}

// Reads one varint-prefixed text of at most `max_bytes` into `out`; `field` names it in errors.
std::optional<DecodeError> load_text(const std::byte*& at, const std::byte* data,
                                     const std::byte* limit, const std::string& field,
                                     std::uint32_t max_bytes, std::string& out) {
  const auto offset = static_cast<std::size_t>(at - data);
  const wire::VarintRead length = wire::load_varint32(at, limit);
  if (length.status == wire::VarintStatus::truncated)
    return error_at(field, offset, "frame truncated inside the settings");
  if (length.status != wire::VarintStatus::ok)
    return error_at(field, offset, "malformed length varint");
  if (length.value > max_bytes)
    return error_at(
        field, offset,
        std::to_string(length.value) + " bytes exceed the limit of " + std::to_string(max_bytes));
  if (static_cast<std::size_t>(limit - length.end) < length.value)
    return error_at(field, offset, "frame truncated inside the settings");
  out.assign(reinterpret_cast<const char*>(length.end), length.value);
  at = length.end + length.value;
  return std::nullopt;
}

std::optional<DecodeError> load_settings(const std::byte*& at, const std::byte* data,
                                         const std::byte* limit, const DecodeLimits& limits,
                                         std::vector<RunSetting>& out) {
  const auto offset = static_cast<std::size_t>(at - data);
  const wire::VarintRead count = wire::load_varint32(at, limit);
  if (count.status == wire::VarintStatus::truncated)
    return error_at("settings", offset, "frame truncated inside the settings");
  if (count.status != wire::VarintStatus::ok)
    return error_at("settings", offset, "malformed count varint");
  if (count.value == 0)
    return error_at("settings", offset, "flagged present but empty (not the canonical encoding)");
  if (count.value > limits.max_settings)
    return error_at("settings", offset,
                    std::to_string(count.value) + " settings exceed the limit of " +
                        std::to_string(limits.max_settings));
  at = count.end;
  out.resize(count.value);
  for (std::uint32_t i = 0; i < count.value; ++i) {
    const std::string field = "setting " + std::to_string(i);
    if (auto e = load_text(at, data, limit, field + " name", limits.max_setting_bytes, out[i].name))
      return e;
    if (auto e =
            load_text(at, data, limit, field + " value", limits.max_setting_bytes, out[i].value))
      return e;
  }
  return std::nullopt;
}

}  // namespace

std::size_t encoded_proposal_size(const Proposal& proposal) {
  std::size_t size = kHeaderSize;
  for (const ProposedSample& sample : proposal.samples)
    for (std::uint32_t field : fields_of(sample)) size += wire::varint32_size(field);
  return size + settings_size(proposal.settings);
}

std::size_t max_encoded_proposal_size(std::size_t samples) {
  return kHeaderSize + kMaxSampleSize * samples;
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
  for (const RunSetting& setting : proposal.settings)
    if (setting.name.size() > std::numeric_limits<std::uint32_t>::max() ||
        setting.value.size() > std::numeric_limits<std::uint32_t>::max())
      throw std::length_error("setting " + setting.name.substr(0, 64) + " is too long for a frame");
  // Shrunk to the bytes written below.
  out.resize(max_encoded_proposal_size(count) + settings_size(proposal.settings));
  std::byte* const frame = out.data();
  for (std::size_t i = 0; i < kMagic.size(); ++i) frame[kMagicOffset + i] = kMagic[i];
  store_le(frame + kVersionOffset, proposal.version);
  store_le(frame + kStateOffset, static_cast<std::uint8_t>(proposal.state));
  store_le(frame + kFlagsOffset, proposal.settings.empty() ? std::uint8_t{0} : kHasSettings);
  store_le(frame + kFingerprintOffset, proposal.fingerprint);
  store_le(frame + kEpochOffset, proposal.epoch);
  store_le(frame + kRoundOffset, proposal.round);
  store_le(frame + kPrevDigestOffset, proposal.prev_digest);
  store_le(frame + kEnteredOffset, proposal.entered);
  store_le(frame + kSampleCountOffset, static_cast<std::uint32_t>(count));
  std::byte* end = frame + kHeaderSize;
  for (const ProposedSample& sample : proposal.samples)
    for (std::uint32_t field : fields_of(sample)) end = wire::store_varint32(end, field);
  if (!proposal.settings.empty()) {
    end = wire::store_varint32(end, static_cast<std::uint32_t>(proposal.settings.size()));
    for (const RunSetting& setting : proposal.settings) {
      end = store_text(end, setting.name);
      end = store_text(end, setting.value);
    }
  }
  out.resize(static_cast<std::size_t>(end - frame));
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
  const auto flags = load_le<std::uint8_t>(data + kFlagsOffset);
  if ((flags & ~kHasSettings) != 0)
    return error_at("flags", kFlagsOffset, "unknown flags " + std::to_string(flags));

  const auto entered = load_le<std::uint32_t>(data + kEnteredOffset);
  const auto count = load_le<std::uint32_t>(data + kSampleCountOffset);
  if (count > limits.max_samples)
    return error_at(
        "sample_count", kSampleCountOffset,
        std::to_string(count) + " exceeds the limit of " + std::to_string(limits.max_samples));
  // Checked before anything is allocated for the samples, so a lying count costs nothing. In 64
  // bits: 48 + 4 * (2^32 - 1) cannot overflow, even where size_t is 32 bits wide.
  const std::uint64_t min_size = std::uint64_t{kHeaderSize} + std::uint64_t{kMinSampleSize} * count;
  if (frame.size() < min_size)
    return error_at("samples", frame.size(),
                    "frame truncated: " + std::to_string(frame.size()) + " bytes, at least " +
                        std::to_string(min_size) + " expected for " + std::to_string(count) +
                        " samples");
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
  const std::byte* at = data + kHeaderSize;
  const std::byte* const limit = data + frame.size();
  for (std::uint32_t i = 0; i < count; ++i) {
    std::array<std::uint32_t, kSampleFields> fields{};
    for (std::size_t f = 0; f < kSampleFields; ++f) {
      const wire::VarintRead read = wire::load_varint32(at, limit);
      if (read.status != wire::VarintStatus::ok) {
        const std::string field =
            std::string(kSampleFieldNames[f]) + " of sample " + std::to_string(i);
        const auto offset = static_cast<std::size_t>(at - data);
        switch (read.status) {
          case wire::VarintStatus::truncated:
            return error_at(field, offset,
                            "frame truncated: " + std::to_string(frame.size()) + " bytes end " +
                                "inside sample " + std::to_string(i) + " of " +
                                std::to_string(count));
          case wire::VarintStatus::overlong:
            return error_at(field, offset, "varint longer than its value needs");
          default:
            return error_at(field, offset, "varint wider than 32 bits");
        }
      }
      fields[f] = read.value;
      at = read.end;
    }
    out.samples[i] = ProposedSample{fields[0], fields[1], fields[2], fields[3]};
  }
  out.settings.clear();
  if ((flags & kHasSettings) != 0)
    if (auto e = load_settings(at, data, limit, limits, out.settings)) return e;
  if (at != limit) {
    const auto offset = static_cast<std::size_t>(at - data);
    return error_at((flags & kHasSettings) != 0 ? "settings" : "samples", offset,
                    std::to_string(frame.size() - offset) + " trailing bytes after " +
                        std::to_string(count) + " samples" +
                        ((flags & kHasSettings) != 0 ? " and the settings" : ""));
  }
  return std::nullopt;
}

}  // namespace odbatch
