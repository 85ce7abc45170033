#pragma once
// Small tokenizer files for tests and fuzz seeds: a byte-level BPE tokenizer.json and a tiktoken
// ranks file with a few merges, written independently of the loaders.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch::test {

// GPT-2's byte-level symbols: printable Latin-1 bytes stand for themselves, the others for
// U+0100 onwards in byte order. Written here independently of the implementation.
inline std::string byte_symbol(int byte) {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> table(256);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      const int code_point = printable ? b : next++;
      std::string utf8;
      if (code_point < 0x80) {
        utf8 += static_cast<char>(code_point);
      } else {
        utf8 += static_cast<char>(0xC0 | code_point >> 6);
        utf8 += static_cast<char>(0x80 | (code_point & 0x3F));
      }
      table[static_cast<std::size_t>(b)] = utf8;
    }
    return table;
  }();
  return symbols[static_cast<std::size_t>(byte)];
}

// Ids 0-255 are the bytes; merges add "he" 256, "ll" 257, "hell" 258, "hello" 259, "aa" 260,
// " w" 261 (as "Ġw").
inline nlohmann::json tiny_tokenizer(bool merges_as_strings = true) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_symbol(b)] = b;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"a", "a"}, {byte_symbol(' '), "w"}};
  nlohmann::json merge_list = nlohmann::json::array();
  TokenId next = 256;
  for (const auto& [left, right] : merges) {
    vocab[left + right] = next++;
    merge_list.push_back(merges_as_strings ? nlohmann::json(left + " " + right)
                                           : nlohmann::json({left, right}));
  }
  const nlohmann::json byte_level = {{"type", "ByteLevel"},
                                     {"add_prefix_space", false},
                                     {"trim_offsets", false},
                                     {"use_regex", false}};
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", nlohmann::json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", R"( ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              byte_level}}}},
          {"post_processor", byte_level},
          {"decoder", byte_level},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"vocab", vocab},
            {"merges", merge_list}}}};
}

inline nlohmann::json added_token(TokenId id, const std::string& content,
                                  nlohmann::json flags = nlohmann::json::object()) {
  nlohmann::json token = {{"id", id},        {"content", content}, {"single_word", false},
                          {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                          {"special", true}};
  token.update(flags);
  return token;
}

// RFC 4648 base64 with padding, as tiktoken ranks files write tokens.
inline std::string base64(const std::string& bytes) {
  static constexpr char kBase64[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    unsigned group = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 2]);
    for (std::size_t k = 0; k < 4; ++k)
      out += k <= bytes.size() - i ? kBase64[group >> (18 - 6 * k) & 63] : '=';
  }
  return out;
}

// A tiktoken ranks file: the 256 bytes, then "he" 256, "ll" 257, "hell" 258, "hello" 259.
inline std::string tiny_ranks() {
  std::string ranks;
  for (int b = 0; b < 256; ++b)
    ranks += base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  return ranks + base64("he") + " 256\n" + base64("ll") + " 257\n" + base64("hell") + " 258\n" +
         base64("hello") + " 259\n";
}

}  // namespace odbatch::test
