#pragma once
// The TCP store's frames (docs/store.md has the table). A frame is a little-endian u32 length
// followed by that many bytes of body: version, op, a signed 64-bit number, keys and values, each
// length-prefixed. Requests and replies share the layout; each op fixes how many keys and values
// it carries and what its number means. Decoding never trusts the bytes: every malformed or
// oversized frame yields an error, never undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace odbatch {

inline constexpr std::uint16_t kStoreWireVersion = 2;
// The length prefix in front of every body.
inline constexpr std::size_t kStoreLengthPrefixBytes = 4;
// version u16, op u8, reserved u8, number i64, key count u32, value count u32.
inline constexpr std::size_t kStoreBodyHeaderBytes = 20;
// Timeouts travel in milliseconds; a week bounds them so that deadlines never overflow.
inline constexpr std::int64_t kMaxStoreTimeoutMs = 7LL * 24 * 3600 * 1000;
// The longest token a hello may carry. It bounds the hello, and with it what the server reads
// from a connection that has not authenticated yet.
inline constexpr std::uint32_t kMaxStoreTokenBytes = 1024;
// The largest hello body: the header and one value, the token, with its length.
inline constexpr std::uint32_t kMaxStoreHelloBodyBytes =
    kStoreBodyHeaderBytes + 4 + kMaxStoreTokenBytes;

enum class StoreOp : std::uint8_t {
  // Requests.
  hello = 1,            // value: the token (may be empty); the first frame of every connection
  set = 2,              // key, value
  get = 3,              // key; number: timeout in ms
  add = 4,              // key; number: delta
  compare_and_set = 5,  // key; values: desired, or expected then desired
  check = 6,            // keys
  wait = 7,             // keys; number: timeout in ms
  erase = 8,            // key
  erase_prefix = 9,     // key: the prefix
  set_and_wait = 10,    // keys: the one to set, then those to wait for; value; number: timeout
  // Replies.
  ok = 128,         // number and values, as the request's op defines
  timed_out = 129,  // keys: those still missing
  failed = 130,     // value: why, as text; number: 1 when the server closes the connection after it
};

// The name of an op as errors and docs spell it ("compare_and_set"); "op 200" for unknown codes.
std::string store_op_name(StoreOp op);

struct StoreWireLimits {
  std::uint32_t max_key_bytes = 4096;
  std::uint32_t max_value_bytes = 4u << 20;
  std::uint32_t max_keys = 4096;              // keys in one frame
  std::uint32_t max_frame_bytes = 16u << 20;  // body bytes after the length prefix
};

// The limits before a connection's hello: only a hello fits, so that a client that has not
// authenticated can make the server allocate no more than kMaxStoreHelloBodyBytes.
StoreWireLimits store_hello_limits();

struct StoreMessage {
  StoreOp op = StoreOp::ok;
  std::int64_t number = 0;
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;

  bool operator==(const StoreMessage&) const = default;
};

struct StoreWireError {
  std::string message;  // what is wrong and, for decoding, at which byte offset of the body
};

// Checks `message` against its op's shape and the limits, then replaces `out` with its frame
// (length prefix included). On error `out` is left unspecified.
std::optional<StoreWireError> encode_store_frame(const StoreMessage& message,
                                                 std::vector<std::byte>& out,
                                                 const StoreWireLimits& limits);

// The body length a frame's prefix announces; an error when it cannot hold a body header or
// exceeds max_frame_bytes, so a reader never allocates for an oversized frame.
std::optional<StoreWireError> decode_store_frame_length(
    std::span<const std::byte, kStoreLengthPrefixBytes> prefix, std::uint32_t& body_bytes,
    const StoreWireLimits& limits);

// Decodes a body (the bytes after the length prefix). Fills `out` on success; on error returns it
// and leaves `out` unspecified.
std::optional<StoreWireError> decode_store_body(std::span<const std::byte> body, StoreMessage& out,
                                                const StoreWireLimits& limits);

}  // namespace odbatch
