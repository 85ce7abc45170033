#include "odbatch/core/bounded_text.hpp"

namespace odbatch {

std::string bounded_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the sequence they belong to.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) +
         " bytes in all)";
}

}  // namespace odbatch
