#include "odbatch/proto_msgs/proposal_codec.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "frame_bytes.hpp"
#include "odbatch/core/split_mix64.hpp"

namespace odbatch {
namespace {

using test::below;
using test::hex;
using Frame = std::vector<std::byte>;

// Extremes are over-represented: they are where a codec's shifts and widths go wrong.
std::uint64_t random_u64(SplitMix64& rng) {
  switch (below(rng, 4)) {
    case 0:
      return 0;
    case 1:
      return std::numeric_limits<std::uint64_t>::max();
    default:
      return rng.next();
  }
}

std::uint32_t random_u32(SplitMix64& rng) {
  return static_cast<std::uint32_t>(random_u64(rng));
}

Proposal random_proposal(SplitMix64& rng) {
  Proposal p;
  p.fingerprint = random_u64(rng);
  p.epoch = random_u64(rng);
  p.round = random_u64(rng);
  p.state = static_cast<RankState>(below(rng, 3));
  p.prev_digest = random_u64(rng);
  p.samples.resize(below(rng, 4) == 0 ? 0 : below(rng, 40));
  for (ProposedSample& s : p.samples) {
    s.tokens = random_u32(rng);
    s.labels = random_u32(rng);
    s.patches = random_u32(rng);
    s.age = random_u32(rng);
  }
  const auto count = static_cast<std::uint32_t>(p.samples.size());
  switch (below(rng, 3)) {
    case 0:
      p.entered = 0;
      break;
    case 1:
      p.entered = count;
      break;
    default:
      p.entered = static_cast<std::uint32_t>(below(rng, std::uint64_t{count} + 1));
  }
  if (below(rng, 3) == 0) {
    p.settings.resize(1 + below(rng, 5));
    for (RunSetting& setting : p.settings) {
      setting.name = std::string(below(rng, 200), 'n');
      setting.value = std::string(below(rng, 3) == 0 ? 0 : below(rng, 300), '\xff');
    }
  }
  return p;
}

Proposal small_proposal() {
  Proposal p;
  p.fingerprint = 0x1122334455667788;
  p.epoch = 3;
  p.round = 0x0102;
  p.state = RankState::draining;
  p.prev_digest = 0xF0E0D0C0B0A09080;
  p.entered = 1;
  p.samples = {{0x12345678, 0x0100, 0, 4}, {7, 5, 0xFFFFFFFF, 0}};
  return p;
}

Frame bytes(std::initializer_list<int> values) {
  Frame frame;
  for (int v : values) frame.push_back(static_cast<std::byte>(v));
  return frame;
}

// The decoder's message, or an empty string when the frame decodes.
std::string decode_error(const Frame& frame, const DecodeLimits& limits = {}) {
  Proposal decoded;
  const auto error = decode_proposal(frame, decoded, limits);
  return error ? error->message : std::string{};
}

void put_u32(Frame& frame, std::size_t offset, std::uint32_t value) {
  for (std::size_t i = 0; i < 4; ++i) frame[offset + i] = static_cast<std::byte>(value >> (8 * i));
}

Frame garbage(SplitMix64& rng) {
  Frame frame(below(rng, 160));
  for (std::byte& b : frame) b = static_cast<std::byte>(rng.next());
  // Half of them get a valid magic and version, so the checks behind those are reached too.
  if (frame.size() >= 6 && below(rng, 2) == 0) {
    const Frame prefix =
        bytes({'O', 'D', 'B', 'P', kProtocolVersion & 0xFF, kProtocolVersion >> 8});
    std::copy(prefix.begin(), prefix.end(), frame.begin());
  }
  return frame;
}

TEST_CASE("encoded size is a 48-byte header plus each sample's four varints") {
  CHECK(encode_proposal(Proposal{}).size() == 48);
  CHECK(encoded_proposal_size(Proposal{}) == 48);
  // 0x12345678: 5 bytes, 0x100: 2, 0: 1, 4: 1; then 1 + 1 + 5 + 1.
  CHECK(encoded_proposal_size(small_proposal()) == 48 + 9 + 8);
  CHECK(encode_proposal(small_proposal()).size() == encoded_proposal_size(small_proposal()));
  CHECK(max_encoded_proposal_size(0) == 48);
  CHECK(max_encoded_proposal_size(3) == 48 + 3 * 20);
}

TEST_CASE("a window of typical samples is far below 16 bytes per sample") {
  Proposal p;
  p.samples.assign(1024, ProposedSample{2000, 1500, 0, 3});
  CHECK(encode_proposal(p).size() == 48 + 1024 * 6);
}

TEST_CASE("varints: each width's boundaries round-trip, every length is the shortest") {
  for (std::uint32_t value : {0u, 1u, 127u, 128u, 16383u, 16384u, 2097151u, 2097152u, 268435455u,
                              268435456u, std::numeric_limits<std::uint32_t>::max()}) {
    CAPTURE(value);
    Proposal p;
    p.samples = {{value, value, value, value}};
    p.entered = 1;
    const Frame frame = encode_proposal(p);
    const std::size_t width = value < (1u << 7)    ? 1
                              : value < (1u << 14) ? 2
                              : value < (1u << 21) ? 3
                              : value < (1u << 28) ? 4
                                                   : 5;
    CHECK(frame.size() == 48 + 4 * width);
    Proposal decoded;
    REQUIRE(!decode_proposal(frame, decoded));
    CHECK(decoded == p);
  }
}

TEST_CASE("seeded random proposals round-trip, extremes included") {
  SplitMix64 rng(20240611);
  Frame reused;
  for (int i = 0; i < 2000; ++i) {
    const Proposal original = random_proposal(rng);
    const Frame fresh = encode_proposal(original);
    encode_proposal(original, reused);  // reuses whatever the previous, larger or smaller, left
    REQUIRE(reused == fresh);
    REQUIRE(fresh.size() == encoded_proposal_size(original));
    if (original.settings.empty())
      REQUIRE(fresh.size() <= max_encoded_proposal_size(original.samples.size()));
    Proposal decoded;
    decoded.samples.resize(100);  // stale content must be replaced, not appended to
    const auto error = decode_proposal(fresh, decoded);
    REQUIRE_MESSAGE(!error, error->message);
    REQUIRE(decoded == original);
  }
}

TEST_CASE("golden bytes: little-endian header, varint samples") {
  const Frame golden = bytes({
      'O',  'D',  'B',  'P',                           // magic
      0x03, 0x00,                                      // version
      0x01,                                            // state DRAINING
      0x00,                                            // flags: no settings
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // fingerprint
      0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // epoch
      0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // round
      0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,  // prev_digest
      0x01, 0x00, 0x00, 0x00,                          // entered
      0x02, 0x00, 0x00, 0x00,                          // sample_count
      0xF8, 0xAC, 0xD1, 0x91, 0x01,                    // sample 0: tokens 0x12345678
      0x80, 0x02,                                      //           labels 0x100
      0x00,                                            //           patches 0
      0x04,                                            //           age 4
      0x07, 0x05,                                      // sample 1: tokens 7, labels 5
      0xFF, 0xFF, 0xFF, 0xFF, 0x0F,                    //           patches 0xFFFFFFFF
      0x00,                                            //           age 0
  });
  REQUIRE(kProtocolVersion == 3);
  CHECK(hex(encode_proposal(small_proposal())) == hex(golden));
  Proposal decoded;
  REQUIRE(!decode_proposal(golden, decoded));
  CHECK(decoded == small_proposal());
}

TEST_CASE("every truncation of a valid frame is rejected") {
  const Frame frame = encode_proposal(small_proposal());
  for (std::size_t size = 0; size < frame.size(); ++size) {
    CAPTURE(size);
    const std::string message = decode_error(Frame(frame.begin(), frame.begin() + size));
    if (size < 48) {
      CHECK(message.find("shorter than the 48-byte header") != std::string::npos);
    } else {
      CHECK(message.find("truncated") != std::string::npos);
    }
  }
}

TEST_CASE("a trailing extra byte is rejected") {
  Frame frame = encode_proposal(small_proposal());
  frame.push_back(std::byte{0});
  const std::string message = decode_error(frame);
  CHECK(message.find("1 trailing bytes") != std::string::npos);
  CHECK(message.find("offset 65") != std::string::npos);
}

TEST_CASE("bad magic is rejected") {
  Frame frame = encode_proposal(small_proposal());
  frame[2] = std::byte{'X'};
  const std::string message = decode_error(frame);
  CHECK(message.find("magic") != std::string::npos);
  CHECK(message.find("offset 2") != std::string::npos);
}

TEST_CASE("an unsupported version is rejected") {
  Proposal p = small_proposal();
  p.version = kProtocolVersion + 1;
  const std::string message = decode_error(encode_proposal(p));
  CHECK(message.find("version at byte offset 4") != std::string::npos);
  CHECK(message.find("unsupported version " + std::to_string(kProtocolVersion + 1) + ", expected " +
                     std::to_string(kProtocolVersion)) != std::string::npos);
}

TEST_CASE("an unknown state is rejected") {
  Frame frame = encode_proposal(small_proposal());
  for (int state : {3, 255}) {
    CAPTURE(state);
    frame[6] = static_cast<std::byte>(state);
    const std::string message = decode_error(frame);
    CHECK(message.find("state at byte offset 6") != std::string::npos);
    CHECK(message.find("unknown state " + std::to_string(state)) != std::string::npos);
  }
}

TEST_CASE("golden bytes: the settings section follows the samples") {
  Proposal p = small_proposal();
  p.samples.clear();
  p.entered = 0;
  p.settings = {{"a.b", "on"}, {"c", ""}};
  const Frame frame = encode_proposal(p);
  REQUIRE(frame.size() == 48 + 1 + 4 + 3 + 2 + 1);  // count, a.b, on, c, ""
  CHECK(frame[7] == std::byte{1});                  // flags: settings follow
  const Frame section(frame.begin() + 48, frame.end());
  CHECK(hex(section) == hex(bytes({0x02, 0x03, 'a', '.', 'b', 0x02, 'o', 'n', 0x01, 'c', 0x00})));
  Proposal decoded;
  REQUIRE(!decode_proposal(frame, decoded));
  CHECK(decoded == p);
  CHECK(encoded_proposal_size(p) == frame.size());
}

TEST_CASE("unknown flags are rejected") {
  Frame frame = encode_proposal(small_proposal());
  frame[7] = std::byte{2};
  CHECK(decode_error(frame).find("flags at byte offset 7") != std::string::npos);
}

TEST_CASE("malformed settings sections are rejected, never allocated for") {
  Proposal p = small_proposal();
  p.settings = {{"source.shuffle", "true"}};
  const Frame frame = encode_proposal(p);
  SUBCASE("every truncation inside the section") {
    for (std::size_t size = encode_proposal(small_proposal()).size(); size < frame.size(); ++size) {
      CAPTURE(size);
      CHECK(decode_error(Frame(frame.begin(), frame.begin() + size)).find("truncated") !=
            std::string::npos);
    }
  }
  SUBCASE("flagged but empty") {
    Frame empty = encode_proposal(small_proposal());
    empty[7] = std::byte{1};
    empty.push_back(std::byte{0});
    CHECK(decode_error(empty).find("flagged present but empty") != std::string::npos);
  }
  SUBCASE("a count or a length above the limits") {
    DecodeLimits limits;
    limits.max_settings = 0;
    CHECK(decode_error(frame, limits).find("1 settings exceed the limit of 0") !=
          std::string::npos);
    limits = DecodeLimits{};
    limits.max_setting_bytes = 13;
    CHECK(decode_error(frame, limits).find("setting 0 name") != std::string::npos);
    CHECK(decode_error(frame, limits).find("14 bytes exceed the limit of 13") != std::string::npos);
  }
  SUBCASE("a length that claims more bytes than the frame holds") {
    Frame lying = encode_proposal(small_proposal());
    lying[7] = std::byte{1};
    for (const int b : {0x01, 0xFF, 0xFF, 0x3F}) lying.push_back(static_cast<std::byte>(b));
    CHECK(decode_error(lying).find("truncated") != std::string::npos);
  }
  SUBCASE("trailing bytes after the section") {
    Frame longer = frame;
    longer.push_back(std::byte{0});
    CHECK(decode_error(longer).find("1 trailing bytes after 2 samples and the settings") !=
          std::string::npos);
  }
}

TEST_CASE("sample_count above the limit is rejected even when the frame is long enough") {
  Proposal p = small_proposal();
  p.samples.resize(10);
  const Frame frame = encode_proposal(p);
  CHECK(decode_error(frame, DecodeLimits{10}).empty());
  const std::string message = decode_error(frame, DecodeLimits{9});
  CHECK(message.find("sample_count at byte offset 44") != std::string::npos);
  CHECK(message.find("10 exceeds the limit of 9") != std::string::npos);
}

TEST_CASE("the largest sample_count is a truncated frame, not an overflow") {
  Frame frame = encode_proposal(small_proposal());
  put_u32(frame, 44, std::numeric_limits<std::uint32_t>::max());
  CHECK(decode_error(frame).find("sample_count") != std::string::npos);
  const std::string message =
      decode_error(frame, DecodeLimits{std::numeric_limits<std::uint32_t>::max()});
  CHECK(message.find("truncated") != std::string::npos);
  CHECK(message.find("at least 17179869228 expected") != std::string::npos);  // 48 + 4 * (2^32 - 1)
}

TEST_CASE("a varint longer than its value needs is rejected, naming the field and sample") {
  Frame frame = encode_proposal(small_proposal());
  // Sample 1's tokens (7, at offset 57) re-encoded in two bytes; the frame stays one byte longer.
  frame[57] = std::byte{0x87};
  frame.insert(frame.begin() + 58, std::byte{0x00});
  const std::string message = decode_error(frame);
  CHECK(message.find("tokens of sample 1 at byte offset 57") != std::string::npos);
  CHECK(message.find("longer than its value needs") != std::string::npos);
}

TEST_CASE("a varint wider than 32 bits is rejected") {
  Frame frame = encode_proposal(small_proposal());
  frame[63] = std::byte{0x1F};  // fifth byte of sample 1's patches: bit 32 set
  const std::string message = decode_error(frame);
  CHECK(message.find("patches of sample 1 at byte offset 59") != std::string::npos);
  CHECK(message.find("wider than 32 bits") != std::string::npos);
}

TEST_CASE("entered above sample_count is rejected") {
  Proposal p = small_proposal();
  p.entered = 3;
  const std::string message = decode_error(encode_proposal(p));
  CHECK(message.find("entered at byte offset 40") != std::string::npos);
  CHECK(message.find("3 exceeds sample_count 2") != std::string::npos);
}

// A decoder with no lenient path accepts only frames that are exactly some proposal's encoding.
TEST_CASE("mutated and garbage frames decode exactly or fail cleanly") {
  SplitMix64 rng(7);
  std::vector<Frame> valid;
  for (int i = 0; i < 16; ++i) valid.push_back(encode_proposal(random_proposal(rng)));
  int accepted = 0;
  int rejected = 0;
  Proposal decoded;
  Frame reencoded;
  for (int i = 0; i < 200000; ++i) {
    const Frame frame =
        i % 4 == 3 ? garbage(rng) : test::mutate_frame(valid[below(rng, valid.size())], rng);
    if (const auto error = decode_proposal(frame, decoded)) {
      if (error->message.empty()) FAIL("an error without a message");
      ++rejected;
      continue;
    }
    encode_proposal(decoded, reencoded);
    if (reencoded != frame)
      FAIL("accepted a frame that is not a canonical encoding: " << hex(frame));
    ++accepted;
  }
  CHECK(accepted > 1000);
  CHECK(rejected > 1000);
}

}  // namespace
}  // namespace odbatch
