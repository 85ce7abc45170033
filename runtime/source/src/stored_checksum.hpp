#pragma once
// The checksum the source library's cache files end with (remote blocks, tar indexes), so that a
// file edited or damaged on disk is noticed: a StableHasher digest of the bytes in `domain`, as 8
// little-endian bytes. Private to the source library.
#include <cstdint>
#include <string>
#include <string_view>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {

inline constexpr std::uint64_t kStoredChecksumBytes = 8;

inline std::string stored_checksum(std::uint64_t domain, std::string_view bytes) {
  std::uint64_t checksum = StableHasher(domain).add(bytes).digest();
  std::string encoded;
  for (std::uint64_t i = 0; i < kStoredChecksumBytes; ++i, checksum >>= 8)
    encoded.push_back(static_cast<char>(checksum & 0xff));
  return encoded;
}

}  // namespace odbatch
