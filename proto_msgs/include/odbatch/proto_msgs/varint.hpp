#pragma once
// Unsigned LEB128 for 32-bit (and, below, 64-bit) values: 7 bits per byte, low groups first, the
// high bit of a byte set when another follows. Small values (token counts, ages, patch counts of
// zero) take 1 or 2 bytes. Only the shortest encoding of a value decodes, so every value has
// exactly one encoding.
#include <cstddef>
#include <cstdint>

namespace odbatch::wire {

inline constexpr std::size_t kMaxVarint32Size = 5;

inline std::size_t varint32_size(std::uint32_t value) {
  std::size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// Writes at `at`, which must have room for kMaxVarint32Size bytes; returns the end.
inline std::byte* store_varint32(std::byte* at, std::uint32_t value) {
  while (value >= 0x80) {
    *at++ = static_cast<std::byte>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  *at++ = static_cast<std::byte>(value);
  return at;
}

enum class VarintStatus : std::uint8_t { ok, truncated, overlong, too_large };

struct VarintRead {
  VarintStatus status = VarintStatus::ok;
  std::uint32_t value = 0;
  const std::byte* end = nullptr;  // one past the last byte read (valid when ok)
};

inline VarintRead load_varint32(const std::byte* at, const std::byte* limit) {
  std::uint32_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at == limit) return {VarintStatus::truncated, 0, nullptr};
    const auto byte = std::to_integer<std::uint32_t>(*at++);
    // The fifth byte holds bits 28..31 and ends the value: anything above is wider than 32 bits.
    if (shift == 28 && byte > 0x0F) return {VarintStatus::too_large, 0, nullptr};
    value |= (byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      // A final zero byte after others adds nothing: a longer encoding than the value needs.
      if (shift > 0 && byte == 0) return {VarintStatus::overlong, 0, nullptr};
      return {VarintStatus::ok, value, at};
    }
  }
}

// The same encoding for 64-bit values (sample ids, counters): at most ten bytes.
inline constexpr std::size_t kMaxVarint64Size = 10;

inline std::byte* store_varint64(std::byte* at, std::uint64_t value) {
  while (value >= 0x80) {
    *at++ = static_cast<std::byte>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  *at++ = static_cast<std::byte>(value);
  return at;
}

struct Varint64Read {
  VarintStatus status = VarintStatus::ok;
  std::uint64_t value = 0;
  const std::byte* end = nullptr;  // one past the last byte read (valid when ok)
};

inline Varint64Read load_varint64(const std::byte* at, const std::byte* limit) {
  std::uint64_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at == limit) return {VarintStatus::truncated, 0, nullptr};
    const auto byte = std::to_integer<std::uint64_t>(*at++);
    // The tenth byte holds bit 63 alone.
    if (shift == 63 && byte > 0x01) return {VarintStatus::too_large, 0, nullptr};
    value |= (byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      if (shift > 0 && byte == 0) return {VarintStatus::overlong, 0, nullptr};
      return {VarintStatus::ok, value, at};
    }
  }
}

}  // namespace odbatch::wire
