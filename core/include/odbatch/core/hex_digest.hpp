#pragma once
// 64-bit digests and fingerprints as text: "0x" and 16 lowercase hex digits. JSON output carries
// them as such strings, since a JSON number above 2^53 is rounded by jq and JavaScript.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace odbatch {

std::string hex_digest(std::uint64_t value);

// The value of "0x" followed by 1 to 16 hex digits (either case); nullopt for anything else.
std::optional<std::uint64_t> parse_hex_digest(std::string_view text);

}  // namespace odbatch
