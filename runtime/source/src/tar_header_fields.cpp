#include "tar_header_fields.hpp"

namespace odbatch {
namespace {

// A numeric field: octal digits (spaces or NULs around them), or GNU tar's base-256 (the first
// byte's high bit set) for sizes from 8 GiB.
std::optional<std::uint64_t> number(std::string_view field) {
  std::uint64_t value = 0;
  if (!field.empty() && (static_cast<unsigned char>(field.front()) & 0x80) != 0) {
    for (std::size_t i = 1; i < field.size(); ++i) {
      if (value >> 56 != 0) return std::nullopt;
      value = value << 8 | static_cast<unsigned char>(field[i]);
    }
    return value;
  }
  std::size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i)
    value = value * 8 + static_cast<std::uint64_t>(field[i] - '0');
  for (; i < field.size(); ++i)
    if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
  return value;
}

std::string_view text(std::string_view field) {
  return field.substr(0, field.find('\0'));
}

}  // namespace

std::optional<TarHeaderFields> tar_header_fields(std::string_view block) {
  constexpr std::size_t kHeaderBytes = 512;
  if (block.size() < kHeaderBytes) return std::nullopt;
  const auto size = number(block.substr(124, 12));
  if (!size) return std::nullopt;
  const auto name = text(block.substr(0, 100));
  const auto prefix = text(block.substr(345, 155));
  TarHeaderFields fields;
  fields.type = block[156];
  fields.size = *size;
  fields.path = prefix.empty() ? std::string(name) : std::string(prefix) + "/" + std::string(name);
  return fields;
}

}  // namespace odbatch
