#include "odbatch/store/store_wire.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frame_bytes.hpp"
#include "odbatch/core/split_mix64.hpp"
#include "store_test_support.hpp"

namespace odbatch {
namespace {

using test::below;
using test::Bytes;
using test::hex;
using test::RawBody;

Bytes body_of(const Bytes& frame) {
  return Bytes(frame.begin() + kStoreLengthPrefixBytes, frame.end());
}

// The decoder's message for a body, or an empty string when it decodes.
std::string decode_error(const Bytes& body, const StoreWireLimits& limits = {}) {
  StoreMessage decoded;
  const auto error = decode_store_body(body, decoded, limits);
  return error ? error->message : std::string{};
}

std::string encode_error(const StoreMessage& message, const StoreWireLimits& limits = {}) {
  Bytes frame;
  const auto error = encode_store_frame(message, frame, limits);
  return error ? error->message : std::string{};
}

std::string random_text(SplitMix64& rng, std::size_t min_length) {
  std::string text(min_length + below(rng, 12), '\0');
  for (char& c : text) c = static_cast<char>(rng.next());
  return text;
}

// A random message that respects its op's shape.
StoreMessage random_message(SplitMix64& rng) {
  constexpr StoreOp kOps[] = {
      StoreOp::hello,           StoreOp::set,   StoreOp::get,       StoreOp::add,
      StoreOp::compare_and_set, StoreOp::check, StoreOp::wait,      StoreOp::erase,
      StoreOp::erase_prefix,    StoreOp::ok,    StoreOp::timed_out, StoreOp::failed,
      StoreOp::set_and_wait};
  StoreMessage m;
  m.op = kOps[below(rng, std::size(kOps))];
  auto keys = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) m.keys.push_back(random_text(rng, 1));
  };
  auto values = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) m.values.push_back(store_bytes(random_text(rng, 0)));
  };
  const auto timeout = static_cast<std::int64_t>(below(rng, kMaxStoreTimeoutMs + 1));
  switch (m.op) {
    case StoreOp::hello:
      values(1);
      break;
    case StoreOp::failed:
      values(1);
      m.number = static_cast<std::int64_t>(below(rng, 2));
      break;
    case StoreOp::set:
      keys(1);
      values(1);
      break;
    case StoreOp::get:
      keys(1);
      m.number = timeout;
      break;
    case StoreOp::add:
      keys(1);
      m.number = static_cast<std::int64_t>(rng.next());
      break;
    case StoreOp::compare_and_set:
      keys(1);
      values(1 + below(rng, 2));
      break;
    case StoreOp::check:
    case StoreOp::timed_out:
      keys(1 + below(rng, 5));
      break;
    case StoreOp::wait:
      keys(1 + below(rng, 5));
      m.number = timeout;
      break;
    case StoreOp::set_and_wait:
      keys(2 + below(rng, 5));
      values(1);
      m.number = timeout;
      break;
    case StoreOp::erase:
    case StoreOp::erase_prefix:
      keys(1);
      break;
    case StoreOp::ok:
      m.number = static_cast<std::int64_t>(rng.next());
      values(below(rng, 4));  // several: a set_and_wait's awaited values
      break;
  }
  return m;
}

TEST_CASE("golden bytes: a set frame is little-endian and length-prefixed") {
  const StoreMessage set{StoreOp::set, 0, {"k"}, {store_bytes("v1")}};
  const Bytes golden = {
      std::byte{0x1f}, std::byte{0},   std::byte{0}, std::byte{0},  // body length 31
      std::byte{0x02}, std::byte{0},                                // version 2
      std::byte{0x02},                                              // op set
      std::byte{0},                                                 // reserved
      std::byte{0},    std::byte{0},   std::byte{0}, std::byte{0},  // number
      std::byte{0},    std::byte{0},   std::byte{0}, std::byte{0},  //
      std::byte{0x01}, std::byte{0},   std::byte{0}, std::byte{0},  // 1 key
      std::byte{0x01}, std::byte{0},   std::byte{0}, std::byte{0},  // 1 value
      std::byte{0x01}, std::byte{0},   std::byte{0}, std::byte{0},  // key length 1
      std::byte{'k'},                                               //
      std::byte{0x02}, std::byte{0},   std::byte{0}, std::byte{0},  // value length 2
      std::byte{'v'},  std::byte{'1'},                              //
  };
  CHECK(hex(test::encoded(set)) == hex(golden));
  StoreMessage decoded;
  REQUIRE(!decode_store_body(body_of(golden), decoded, {}));
  CHECK(decoded == set);
}

TEST_CASE("golden bytes: a negative number is two's complement") {
  const Bytes frame = test::encoded(StoreMessage{StoreOp::add, -2, {"c"}, {}});
  const Bytes number(frame.begin() + 8, frame.begin() + 16);
  CHECK(hex(number) == "fe ff ff ff ff ff ff ff ");
}

TEST_CASE("seeded random messages of every op round-trip") {
  SplitMix64 rng(20250117);
  Bytes reused;
  for (int i = 0; i < 3000; ++i) {
    const StoreMessage original = random_message(rng);
    const auto encode_error = encode_store_frame(original, reused, {});
    REQUIRE_MESSAGE(!encode_error, encode_error->message);
    std::uint32_t body_bytes = 0;
    REQUIRE(!decode_store_frame_length(std::span<const std::byte, 4>(reused.data(), 4), body_bytes,
                                       {}));
    REQUIRE(body_bytes == reused.size() - kStoreLengthPrefixBytes);
    StoreMessage decoded;
    decoded.keys.resize(9);  // stale content must be replaced, not appended to
    const auto error = decode_store_body(body_of(reused), decoded, {});
    REQUIRE_MESSAGE(!error, error->message);
    REQUIRE(decoded == original);
  }
}

TEST_CASE("each op's shape is enforced when encoding and when decoding") {
  struct Case {
    StoreMessage message;
    const char* complaint;
  };
  const Case cases[] = {
      {{StoreOp::set, 0, {"k"}, {}}, "set carries 0 values, expected 1"},
      {{StoreOp::set, 0, {}, {store_bytes("v")}}, "set carries 0 keys, expected 1"},
      {{StoreOp::get, -1, {"k"}, {}}, "timeout of -1 ms"},
      {{StoreOp::get, kMaxStoreTimeoutMs + 1, {"k"}, {}}, "timeout of"},
      {{StoreOp::wait, 5, {}, {}}, "wait carries 0 keys, expected at least 1"},
      {{StoreOp::set_and_wait, 5, {"k"}, {store_bytes("v")}},
       "set_and_wait carries 1 keys, expected at least 2"},
      {{StoreOp::set_and_wait, 5, {"k", "w"}, {}}, "set_and_wait carries 0 values, expected 1"},
      {{StoreOp::compare_and_set, 0, {"k"}, {{}, {}, {}}}, "3 values, expected 1 to 2"},
      {{StoreOp::erase, 7, {"k"}, {}}, "erase has number 7, expected 0"},
      {{StoreOp::check, 0, {"a", ""}, {}}, "empty key"},
      {{StoreOp::hello, 0, {}, {}}, "hello carries 0 values, expected 1"},
      {{StoreOp::failed, 0, {}, {}}, "failed carries 0 values"},
      {{StoreOp::failed, 2, {}, {store_bytes("why")}}, "failed has number 2, expected 0 or 1"},
      {{StoreOp::timed_out, 0, {}, {}}, "timed_out carries 0 keys"},
      {{static_cast<StoreOp>(77), 0, {}, {}}, "unknown op 77"},
      {{StoreOp::ok, 0, {}, std::vector<Bytes>(StoreWireLimits{}.max_keys + 1)},
       "ok carries 4097 values, more than the limit of 4096"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.complaint);
    CHECK(encode_error(c.message).find(c.complaint) != std::string::npos);
    RawBody raw;
    raw.op = static_cast<std::uint8_t>(c.message.op);
    raw.number = c.message.number;
    raw.keys = c.message.keys;
    for (const auto& value : c.message.values) raw.values.push_back(store_text(value));
    CHECK(decode_error(raw.bytes()).find(c.complaint) != std::string::npos);
  }
}

TEST_CASE("limits on keys, values, key counts and frames are enforced both ways") {
  StoreWireLimits limits;
  limits.max_key_bytes = 8;
  limits.max_value_bytes = 16;
  limits.max_keys = 3;
  limits.max_frame_bytes = 80;

  const StoreMessage long_key{StoreOp::erase, 0, {std::string(9, 'k')}, {}};
  CHECK(encode_error(long_key, limits) == "key of 9 bytes exceeds the limit of 8");
  CHECK(encode_error(StoreMessage{StoreOp::erase, 0, {std::string(8, 'k')}, {}}, limits).empty());

  const StoreMessage big_value{StoreOp::set, 0, {"k"}, {Bytes(17)}};
  CHECK(encode_error(big_value, limits) == "value of 17 bytes exceeds the limit of 16");

  const StoreMessage many_keys{StoreOp::check, 0, {"a", "b", "c", "d"}, {}};
  CHECK(encode_error(many_keys, limits) == "check carries 4 keys, more than the limit of 3");

  const StoreMessage big_frame{StoreOp::compare_and_set,
                               0,
                               {"k"},
                               {
                                   Bytes(16),
                                   Bytes(16),
                               }};
  CHECK(encode_error(big_frame, limits).empty());
  StoreWireLimits tight = limits;
  tight.max_frame_bytes = 60;
  CHECK(encode_error(big_frame, tight) ==
        "compare_and_set frame of 65 bytes exceeds the limit of 60");

  RawBody raw;
  raw.op = static_cast<std::uint8_t>(StoreOp::erase);
  raw.keys = {std::string(9, 'k')};
  CHECK(decode_error(raw.bytes(), limits) ==
        "key of 9 bytes exceeds the limit of 8 (at body offset 20)");
  raw.op = static_cast<std::uint8_t>(StoreOp::set);
  raw.keys = {"k"};
  raw.values = {std::string(17, 'v')};
  CHECK(decode_error(raw.bytes(), limits) ==
        "value of 17 bytes exceeds the limit of 16 (at body offset 25)");
  raw.op = static_cast<std::uint8_t>(StoreOp::wait);
  raw.values.clear();
  raw.keys = {"a", "b", "c", "d"};
  CHECK(decode_error(raw.bytes(), limits).find("4 keys, more than the limit of 3") !=
        std::string::npos);
  CHECK(decode_error(Bytes(81), limits).find("body of 81 bytes exceeds the limit of 80") !=
        std::string::npos);
}

TEST_CASE("the length prefix is checked before any body is read") {
  StoreWireLimits limits;
  limits.max_frame_bytes = 1000;
  auto length_error = [&](std::uint32_t length) {
    Bytes prefix;
    test::append_le(prefix, length, 4);
    std::uint32_t body_bytes = 0;
    const auto error =
        decode_store_frame_length(std::span<const std::byte, 4>(prefix), body_bytes, limits);
    return error ? error->message : "ok " + std::to_string(body_bytes);
  };
  CHECK(length_error(20) == "ok 20");
  CHECK(length_error(1000) == "ok 1000");
  CHECK(length_error(19) == "frame of 19 bytes is shorter than the 20-byte body header");
  CHECK(length_error(1001) == "frame of 1001 bytes exceeds the limit of 1000");
  CHECK(length_error(std::numeric_limits<std::uint32_t>::max()) ==
        "frame of 4294967295 bytes exceeds the limit of 1000");
}

TEST_CASE("before the hello only a hello fits: its largest size bounds every length") {
  const StoreWireLimits hello = store_hello_limits();
  CHECK(hello.max_frame_bytes == kMaxStoreHelloBodyBytes);
  CHECK(hello.max_frame_bytes < StoreWireLimits{}.max_frame_bytes);
  auto length_error = [&](std::uint32_t length) {
    Bytes prefix;
    test::append_le(prefix, length, 4);
    std::uint32_t body_bytes = 0;
    const auto error =
        decode_store_frame_length(std::span<const std::byte, 4>(prefix), body_bytes, hello);
    return error ? error->message : "ok";
  };
  CHECK(length_error(kMaxStoreHelloBodyBytes) == "ok");
  CHECK(length_error(kMaxStoreHelloBodyBytes + 1).find("exceeds the limit") != std::string::npos);
  CHECK(length_error(16u << 20).find("exceeds the limit") != std::string::npos);

  // A hello with the longest token is exactly that size, and encodes and decodes under them.
  const StoreMessage longest{StoreOp::hello, 0, {}, {Bytes(kMaxStoreTokenBytes, std::byte{'t'})}};
  Bytes frame;
  REQUIRE_FALSE(encode_store_frame(longest, frame, hello));
  CHECK(frame.size() == kStoreLengthPrefixBytes + kMaxStoreHelloBodyBytes);
  StoreMessage decoded;
  CHECK_FALSE(decode_store_body(std::span(frame).subspan(kStoreLengthPrefixBytes), decoded, hello));
  CHECK(decoded == longest);
  // One byte more does not fit; nor does any other request with a large value.
  const StoreMessage too_long{
      StoreOp::hello, 0, {}, {Bytes(kMaxStoreTokenBytes + 1, std::byte{'t'})}};
  CHECK(encode_store_frame(too_long, frame, hello));
  const StoreMessage big_set{StoreOp::set, 0, {"k"}, {Bytes(4096)}};
  CHECK(encode_store_frame(big_set, frame, hello));
}

TEST_CASE("a wrong version, reserved byte or trailing bytes are rejected") {
  RawBody raw;
  raw.keys = {"k"};
  raw.values = {"v"};
  REQUIRE(decode_error(raw.bytes()).empty());

  RawBody wrong_version = raw;
  wrong_version.version = 1;  // before set_and_wait replied with the awaited values
  CHECK(decode_error(wrong_version.bytes()) ==
        "unsupported version 1, expected 2 (at body offset 0)");
  RawBody wrong_reserved = raw;
  wrong_reserved.reserved = 1;
  CHECK(decode_error(wrong_reserved.bytes()) ==
        "reserved byte must be 0, got 1 (at body offset 3)");
  Bytes trailing = raw.bytes();
  trailing.push_back(std::byte{0});
  CHECK(decode_error(trailing) == "1 trailing bytes after the last item (at body offset 30)");
}

TEST_CASE("every truncation of a valid body is rejected") {
  RawBody raw;
  raw.op = static_cast<std::uint8_t>(StoreOp::compare_and_set);
  raw.keys = {"key"};
  raw.values = {"old", "new"};
  const Bytes body = raw.bytes();
  REQUIRE(decode_error(body).empty());
  for (std::size_t size = 0; size < body.size(); ++size) {
    CAPTURE(size);
    const std::string message = decode_error(Bytes(body.begin(), body.begin() + size));
    if (size < kStoreBodyHeaderBytes)
      CHECK(message.find("shorter than the 20-byte header") != std::string::npos);
    else
      CHECK(message.find("frame truncated") != std::string::npos);
  }
}

TEST_CASE("fuzz: mutated and random bodies decode to an error or to their canonical encoding") {
  // A body that decodes must re-encode to the same bytes: the encoding has no slack (fixed
  // reserved byte, exact counts, no trailing bytes), so the decoder accepted nothing it should not.
  SplitMix64 rng(7);
  StoreWireLimits limits;
  limits.max_keys = 8;
  limits.max_key_bytes = 32;
  limits.max_value_bytes = 64;
  limits.max_frame_bytes = 512;
  int decoded_count = 0;
  int rejected_count = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes body;
    if (below(rng, 4) == 0) {
      body.resize(below(rng, 120));
      for (std::byte& b : body) b = static_cast<std::byte>(rng.next());
      // Half of them get a valid version and a known op, so the checks behind those run too.
      if (body.size() >= 4 && below(rng, 2) == 0) {
        body[0] = std::byte{1};
        body[1] = std::byte{0};
        body[2] = static_cast<std::byte>(1 + below(rng, 9));
        body[3] = std::byte{0};
      }
    } else {
      Bytes frame;
      REQUIRE(!encode_store_frame(random_message(rng), frame, {}));
      body = test::mutate_frame(body_of(frame), rng);
    }
    StoreMessage decoded;
    const auto error = decode_store_body(body, decoded, limits);
    if (error) {
      ++rejected_count;
      REQUIRE(!error->message.empty());
      continue;
    }
    ++decoded_count;
    Bytes again;
    const auto encode_failure = encode_store_frame(decoded, again, limits);
    REQUIRE_MESSAGE(!encode_failure, encode_failure->message);
    REQUIRE(hex(body_of(again)) == hex(body));
  }
  // Both outcomes are exercised.
  CHECK(decoded_count > 100);
  CHECK(rejected_count > 1000);
}

TEST_CASE("op names") {
  CHECK(store_op_name(StoreOp::compare_and_set) == "compare_and_set");
  CHECK(store_op_name(StoreOp::timed_out) == "timed_out");
  CHECK(store_op_name(StoreOp::set_and_wait) == "set_and_wait");
  CHECK(store_op_name(static_cast<StoreOp>(200)) == "op 200");
}

}  // namespace
}  // namespace odbatch
