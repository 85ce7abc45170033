#pragma once
// UTF-8 checks and the lossy decoding the reference tokenizers apply to decoded bytes.
#include <cstddef>
#include <string>
#include <string_view>

namespace odbatch::text_detail {

// The length of the well-formed UTF-8 sequence at text[i] (Unicode Table 3-7), or 0.
inline std::size_t valid_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  const std::size_t left = text.size() - i;
  const auto continuation = [&](std::size_t k, unsigned char low = 0x80,
                                unsigned char high = 0xBF) {
    return k < left && byte(i + k) >= low && byte(i + k) <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned char high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned char low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

// The offset of the first byte that does not begin a well-formed sequence, or npos.
inline std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = valid_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

// Appends `bytes` with every maximal ill-formed subpart replaced by U+FFFD (the W3C/WHATWG
// practice Rust's String::from_utf8_lossy follows).
inline void append_utf8_lossy(std::string_view bytes, std::string& out) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t length = valid_sequence_length(bytes, i);
    if (length != 0) {
      out.append(bytes.substr(i, length));
      i += length;
      continue;
    }
    // A maximal subpart: a lead byte followed by as many continuation bytes as are valid in
    // their positions, the first invalid byte not included.
    std::size_t subpart = 1;
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const std::size_t expected = lead >= 0xF0 && lead <= 0xF4   ? 4
                                 : lead >= 0xE0 && lead <= 0xEF ? 3
                                 : lead >= 0xC2 && lead <= 0xDF ? 2
                                                                : 1;
    for (std::size_t k = 1; k < expected && i + k < bytes.size(); ++k) {
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      unsigned char low = 0x80, high = 0xBF;
      if (k == 1 && lead == 0xE0) low = 0xA0;
      if (k == 1 && lead == 0xED) high = 0x9F;
      if (k == 1 && lead == 0xF0) low = 0x90;
      if (k == 1 && lead == 0xF4) high = 0x8F;
      if (next < low || next > high) break;
      ++subpart;
    }
    out += kReplacement;
    i += subpart;
  }
}

}  // namespace odbatch::text_detail
