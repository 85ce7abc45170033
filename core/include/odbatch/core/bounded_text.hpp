#pragma once
// Text that came from data (a chat template's exception message, say) quoted in an error: errors
// go into logs and ledgers once per record, so the quote is cut to a bounded length.
#include <cstddef>
#include <string>
#include <string_view>

namespace odbatch {

// `text` itself when it has at most `max_bytes` bytes; otherwise its first bytes up to
// `max_bytes`, cut before a UTF-8 sequence rather than inside one, then
// "... (N bytes in all)".
std::string bounded_text(std::string_view text, std::size_t max_bytes);

}  // namespace odbatch
