#include "odbatch/store/store_wire.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "odbatch/proto_msgs/little_endian.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kVersionOffset = 0;
constexpr std::size_t kOpOffset = 2;
constexpr std::size_t kReservedOffset = 3;
constexpr std::size_t kNumberOffset = 4;
constexpr std::size_t kKeyCountOffset = 12;
constexpr std::size_t kValueCountOffset = 16;
static_assert(kValueCountOffset + sizeof(std::uint32_t) == kStoreBodyHeaderBytes);
constexpr std::size_t kItemLengthBytes = 4;

using wire::load_le;
using wire::store_le;

enum class NumberRule { zero, flag, timeout, any };

// How many keys and values an op carries and what its number may be.
struct Shape {
  std::uint32_t min_keys;
  std::uint32_t max_keys;  // kManyKeys: up to the limit
  std::uint32_t min_values;
  std::uint32_t max_values;
  NumberRule number;
};
constexpr std::uint32_t kManyKeys = std::numeric_limits<std::uint32_t>::max();

std::optional<Shape> shape_of(StoreOp op) {
  switch (op) {
    case StoreOp::hello:
      return Shape{0, 0, 1, 1, NumberRule::zero};
    case StoreOp::set:
      return Shape{1, 1, 1, 1, NumberRule::zero};
    case StoreOp::get:
      return Shape{1, 1, 0, 0, NumberRule::timeout};
    case StoreOp::add:
      return Shape{1, 1, 0, 0, NumberRule::any};
    case StoreOp::compare_and_set:
      return Shape{1, 1, 1, 2, NumberRule::zero};
    case StoreOp::check:
      return Shape{1, kManyKeys, 0, 0, NumberRule::zero};
    case StoreOp::wait:
      return Shape{1, kManyKeys, 0, 0, NumberRule::timeout};
    case StoreOp::erase:
    case StoreOp::erase_prefix:
      return Shape{1, 1, 0, 0, NumberRule::zero};
    case StoreOp::set_and_wait:
      return Shape{2, kManyKeys, 1, 1, NumberRule::timeout};
    case StoreOp::ok:
      return Shape{0, 0, 0, kManyKeys, NumberRule::any};
    case StoreOp::timed_out:
      return Shape{1, kManyKeys, 0, 0, NumberRule::zero};
    case StoreOp::failed:
      return Shape{0, 0, 1, 1, NumberRule::flag};
  }
  return std::nullopt;
}

std::string count_range(std::uint32_t min, std::uint32_t max) {
  if (min == max) return std::to_string(min);
  if (max == kManyKeys) return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

// The op-level checks that encoding and decoding share.
std::optional<StoreWireError> check_shape(StoreOp op, std::int64_t number, std::uint64_t keys,
                                          std::uint64_t values, const StoreWireLimits& limits) {
  const auto shape = shape_of(op);
  if (!shape) return StoreWireError{"unknown " + store_op_name(op)};
  const std::string name = store_op_name(op);
  if (keys > limits.max_keys)
    return StoreWireError{name + " carries " + std::to_string(keys) +
                          " keys, more than the limit of " + std::to_string(limits.max_keys)};
  if (values > limits.max_keys)
    return StoreWireError{name + " carries " + std::to_string(values) +
                          " values, more than the limit of " + std::to_string(limits.max_keys)};
  if (keys < shape->min_keys || keys > shape->max_keys)
    return StoreWireError{name + " carries " + std::to_string(keys) + " keys, expected " +
                          count_range(shape->min_keys, shape->max_keys)};
  if (values < shape->min_values || values > shape->max_values)
    return StoreWireError{name + " carries " + std::to_string(values) + " values, expected " +
                          count_range(shape->min_values, shape->max_values)};
  if (shape->number == NumberRule::zero && number != 0)
    return StoreWireError{name + " has number " + std::to_string(number) + ", expected 0"};
  if (shape->number == NumberRule::flag && number != 0 && number != 1)
    return StoreWireError{name + " has number " + std::to_string(number) + ", expected 0 or 1"};
  if (shape->number == NumberRule::timeout && (number < 0 || number > kMaxStoreTimeoutMs))
    return StoreWireError{name + " has a timeout of " + std::to_string(number) +
                          " ms, expected 0 to " + std::to_string(kMaxStoreTimeoutMs)};
  return std::nullopt;
}

std::optional<StoreWireError> check_key_length(std::size_t length, const StoreWireLimits& limits) {
  if (length == 0) return StoreWireError{"empty key"};
  if (length > limits.max_key_bytes)
    return StoreWireError{"key of " + std::to_string(length) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_key_bytes)};
  return std::nullopt;
}

std::optional<StoreWireError> check_value_length(std::size_t length,
                                                 const StoreWireLimits& limits) {
  if (length > limits.max_value_bytes)
    return StoreWireError{"value of " + std::to_string(length) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_value_bytes)};
  return std::nullopt;
}

StoreWireError error_at(std::size_t offset, const std::string& what) {
  return StoreWireError{what + " (at body offset " + std::to_string(offset) + ")"};
}

// Reads the length-prefixed items of a body in turn, never past its end.
class BodyReader {
 public:
  explicit BodyReader(std::span<const std::byte> body) : body_(body) {}

  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return body_.size() - offset_; }

  // The next item's length, or nothing when fewer than 4 bytes remain.
  std::optional<std::uint32_t> length() {
    if (remaining() < kItemLengthBytes) return std::nullopt;
    const auto length = load_le<std::uint32_t>(body_.data() + offset_);
    offset_ += kItemLengthBytes;
    return length;
  }

  // The next `length` bytes, or nothing when fewer remain.
  std::optional<std::span<const std::byte>> bytes(std::uint32_t length) {
    if (remaining() < length) return std::nullopt;
    const auto item = body_.subspan(offset_, length);
    offset_ += length;
    return item;
  }

 private:
  std::span<const std::byte> body_;
  std::size_t offset_ = kStoreBodyHeaderBytes;
};

}  // namespace

StoreWireLimits store_hello_limits() {
  StoreWireLimits limits;
  limits.max_value_bytes = kMaxStoreTokenBytes;
  limits.max_keys = 1;  // bounds the value count too: a hello has one value
  limits.max_frame_bytes = kMaxStoreHelloBodyBytes;
  return limits;
}

std::string store_op_name(StoreOp op) {
  switch (op) {
    case StoreOp::hello:
      return "hello";
    case StoreOp::set:
      return "set";
    case StoreOp::get:
      return "get";
    case StoreOp::add:
      return "add";
    case StoreOp::compare_and_set:
      return "compare_and_set";
    case StoreOp::check:
      return "check";
    case StoreOp::wait:
      return "wait";
    case StoreOp::erase:
      return "erase";
    case StoreOp::erase_prefix:
      return "erase_prefix";
    case StoreOp::set_and_wait:
      return "set_and_wait";
    case StoreOp::ok:
      return "ok";
    case StoreOp::timed_out:
      return "timed_out";
    case StoreOp::failed:
      return "failed";
  }
  return "op " + std::to_string(static_cast<unsigned>(op));
}

std::optional<StoreWireError> encode_store_frame(const StoreMessage& message,
                                                 std::vector<std::byte>& out,
                                                 const StoreWireLimits& limits) {
  if (auto error = check_shape(message.op, message.number, message.keys.size(),
                               message.values.size(), limits))
    return error;
  std::uint64_t body_bytes = kStoreBodyHeaderBytes;
  for (const std::string& key : message.keys) {
    if (auto error = check_key_length(key.size(), limits)) return error;
    body_bytes += kItemLengthBytes + key.size();
  }
  for (const auto& value : message.values) {
    if (auto error = check_value_length(value.size(), limits)) return error;
    body_bytes += kItemLengthBytes + value.size();
  }
  if (body_bytes > limits.max_frame_bytes)
    return StoreWireError{store_op_name(message.op) + " frame of " + std::to_string(body_bytes) +
                          " bytes exceeds the limit of " + std::to_string(limits.max_frame_bytes)};

  out.resize(kStoreLengthPrefixBytes + body_bytes);
  store_le(out.data(), static_cast<std::uint32_t>(body_bytes));
  std::byte* const body = out.data() + kStoreLengthPrefixBytes;
  store_le(body + kVersionOffset, kStoreWireVersion);
  store_le(body + kOpOffset, static_cast<std::uint8_t>(message.op));
  store_le(body + kReservedOffset, std::uint8_t{0});
  store_le(body + kNumberOffset, static_cast<std::uint64_t>(message.number));
  store_le(body + kKeyCountOffset, static_cast<std::uint32_t>(message.keys.size()));
  store_le(body + kValueCountOffset, static_cast<std::uint32_t>(message.values.size()));
  std::byte* item = body + kStoreBodyHeaderBytes;
  for (const std::string& key : message.keys) {
    store_le(item, static_cast<std::uint32_t>(key.size()));
    item += kItemLengthBytes;
    for (char c : key) *item++ = static_cast<std::byte>(c);
  }
  for (const auto& value : message.values) {
    store_le(item, static_cast<std::uint32_t>(value.size()));
    item += kItemLengthBytes;
    for (std::byte b : value) *item++ = b;
  }
  return std::nullopt;
}

std::optional<StoreWireError> decode_store_frame_length(
    std::span<const std::byte, kStoreLengthPrefixBytes> prefix, std::uint32_t& body_bytes,
    const StoreWireLimits& limits) {
  const auto length = load_le<std::uint32_t>(prefix.data());
  if (length < kStoreBodyHeaderBytes)
    return StoreWireError{"frame of " + std::to_string(length) + " bytes is shorter than the " +
                          std::to_string(kStoreBodyHeaderBytes) + "-byte body header"};
  if (length > limits.max_frame_bytes)
    return StoreWireError{"frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_frame_bytes)};
  body_bytes = length;
  return std::nullopt;
}

std::optional<StoreWireError> decode_store_body(std::span<const std::byte> body, StoreMessage& out,
                                                const StoreWireLimits& limits) {
  if (body.size() < kStoreBodyHeaderBytes)
    return error_at(0, "body of " + std::to_string(body.size()) + " bytes is shorter than the " +
                           std::to_string(kStoreBodyHeaderBytes) + "-byte header");
  if (body.size() > limits.max_frame_bytes)
    return error_at(0, "body of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
                           std::to_string(limits.max_frame_bytes));
  const std::byte* const data = body.data();
  const auto version = load_le<std::uint16_t>(data + kVersionOffset);
  if (version != kStoreWireVersion)
    return error_at(kVersionOffset, "unsupported version " + std::to_string(version) +
                                        ", expected " + std::to_string(kStoreWireVersion));
  const auto op = static_cast<StoreOp>(load_le<std::uint8_t>(data + kOpOffset));
  const auto reserved = load_le<std::uint8_t>(data + kReservedOffset);
  if (reserved != 0)
    return error_at(kReservedOffset, "reserved byte must be 0, got " + std::to_string(reserved));
  const auto number = static_cast<std::int64_t>(load_le<std::uint64_t>(data + kNumberOffset));
  const auto key_count = load_le<std::uint32_t>(data + kKeyCountOffset);
  const auto value_count = load_le<std::uint32_t>(data + kValueCountOffset);
  if (auto error = check_shape(op, number, key_count, value_count, limits))
    return error_at(kOpOffset, error->message);

  out.op = op;
  out.number = number;
  out.keys.clear();
  out.values.clear();
  BodyReader reader(body);
  // Counts are bounded by the shape check; every item needs at least its length field.
  out.keys.reserve(std::min<std::size_t>(key_count, reader.remaining() / kItemLengthBytes));
  for (std::uint32_t k = 0; k < key_count; ++k) {
    const std::size_t at = reader.offset();
    const auto length = reader.length();
    if (!length) return error_at(at, "frame truncated in the length of key " + std::to_string(k));
    if (auto error = check_key_length(*length, limits)) return error_at(at, error->message);
    const auto bytes = reader.bytes(*length);
    if (!bytes) return error_at(at, "frame truncated in key " + std::to_string(k));
    std::string& key = out.keys.emplace_back(bytes->size(), '\0');
    for (std::size_t i = 0; i < bytes->size(); ++i) key[i] = static_cast<char>((*bytes)[i]);
  }
  for (std::uint32_t v = 0; v < value_count; ++v) {
    const std::size_t at = reader.offset();
    const auto length = reader.length();
    if (!length) return error_at(at, "frame truncated in the length of value " + std::to_string(v));
    if (auto error = check_value_length(*length, limits)) return error_at(at, error->message);
    const auto bytes = reader.bytes(*length);
    if (!bytes) return error_at(at, "frame truncated in value " + std::to_string(v));
    out.values.emplace_back(bytes->begin(), bytes->end());
  }
  if (reader.remaining() != 0)
    return error_at(reader.offset(),
                    std::to_string(reader.remaining()) + " trailing bytes after the last item");
  return std::nullopt;
}

}  // namespace odbatch
