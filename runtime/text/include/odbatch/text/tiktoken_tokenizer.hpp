#pragma once
// tiktoken ranks files (one "<base64 token> <rank>" per line: cl100k_base, o200k_base, Llama-3's
// original tokenizer.model) with a configured split pattern and special tokens.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch {

// The split patterns of OpenAI's encodings, as tiktoken publishes them.
inline constexpr std::string_view kCl100kBasePattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kO200kBasePattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct TiktokenOptions {
  // The regex that splits text into pieces before merging (PCRE2 syntax, \p{..} classes).
  std::string pattern{kCl100kBasePattern};
  // Special tokens and their ids; their ids must not be ranks of the file.
  std::vector<std::pair<std::string, TokenId>> special_tokens;
};

// The pattern of a named preset: "cl100k_base", "o200k_base" or "llama3" (Llama-3's original
// tokenizer.model, which uses cl100k_base's pattern); throws ConfigError (field "pattern") for
// other names.
std::string_view tiktoken_pattern_preset(std::string_view name);

// Throws TokenizerModelError naming the file and line, or the option, that is wrong.
std::unique_ptr<TextTokenizer> load_tiktoken(const std::filesystem::path& ranks_file,
                                             TiktokenOptions options);
// The same from the file's text; `origin` names it in errors.
std::unique_ptr<TextTokenizer> parse_tiktoken(std::string_view text,
                                              const std::filesystem::path& origin,
                                              TiktokenOptions options);

}  // namespace odbatch
