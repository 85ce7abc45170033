#pragma once
// Byte-by-byte little-endian stores and loads for the wire formats (proposals, store frames): the
// layout never depends on the host's byte order. Unrolled at compile time so that compilers can
// merge the bytes into single moves.
#include <cstddef>
#include <utility>

namespace odbatch::wire {

template <typename T, std::size_t... I>
void store_le(std::byte* at, T value, std::index_sequence<I...>) {
  ((at[I] = static_cast<std::byte>(value >> (8 * I))), ...);
}

template <typename T>
void store_le(std::byte* at, T value) {
  store_le(at, value, std::make_index_sequence<sizeof(T)>{});
}

template <typename T, std::size_t... I>
T load_le(const std::byte* at, std::index_sequence<I...>) {
  return static_cast<T>(((static_cast<T>(at[I]) << (8 * I)) | ...));
}

template <typename T>
T load_le(const std::byte* at) {
  return load_le<T>(at, std::make_index_sequence<sizeof(T)>{});
}

}  // namespace odbatch::wire
