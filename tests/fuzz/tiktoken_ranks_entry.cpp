// A tiktoken ranks file as the chat tokenizer loads it (with cl100k_base's pattern and special
// tokens), then a short text encoded with it.
#include <exception>
#include <string>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
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
  std::unique_ptr<TextTokenizer> tokenizer;
  try {
    tokenizer = parse_tiktoken(text, kOrigin, tiktoken_preset_options("cl100k_base"));
  } catch (const TokenizerModelError& e) {
    expect(std::string_view(e.what()).starts_with("tokenizer.model: " + std::string(kOrigin)),
           kTarget, "a load error names the file");
    return Outcome::rejected;
  } catch (const std::exception& e) {
    contract_broken(kTarget,
                    std::string("loading throws only TokenizerModelError, not: ") + e.what());
  }
  check_short_text_encodes(*tokenizer, kTarget);
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
