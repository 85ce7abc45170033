#pragma once
// UTF-8 validation of raw record bytes (RFC 3629: no overlong forms, surrogates or code points
// above U+10FFFF), so text in another encoding is reported as such rather than as bad JSON.
#include <cstddef>
#include <optional>
#include <string_view>

namespace odbatch {

// The offset of the first byte that does not start a valid UTF-8 sequence, or nullopt.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace odbatch
