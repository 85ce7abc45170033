#include "odbatch/core/hex_digest.hpp"

#include <cstdio>

namespace odbatch {

std::string hex_digest(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::optional<std::uint64_t> parse_hex_digest(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || !text.starts_with("0x")) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text.substr(2)) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<std::uint64_t>(digit);
  }
  return value;
}

}  // namespace odbatch
