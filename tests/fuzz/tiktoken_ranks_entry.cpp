// A tiktoken ranks file as the chat tokenizer loads it (with cl100k_base's pattern and special
// tokens), then a short text encoded with it.
#include <string>

#include "fuzz_entries.hpp"
#include "odbatch/text/tiktoken_presets.hpp"
#include "odbatch/text/tiktoken_tokenizer.hpp"
#include "text_tokenizer_contract.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "tiktoken_ranks";
constexpr std::string_view kOrigin = "fuzz/ranks.tiktoken";

}  // namespace

Outcome tiktoken_ranks(Input input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  return check_tokenizer_file(
      [&] { return parse_tiktoken(text, kOrigin, tiktoken_preset_options("cl100k_base")); },
      kOrigin, kTarget);
}

}  // namespace odbatch::fuzz
