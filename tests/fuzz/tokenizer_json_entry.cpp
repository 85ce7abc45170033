// A model's tokenizer.json as the chat tokenizer loads it, then a short text encoded with it.
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "text_tokenizer_contract.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "tokenizer_json";
constexpr std::string_view kOrigin = "fuzz/tokenizer.json";

}  // namespace

Outcome tokenizer_json(Input input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  std::unique_ptr<TextTokenizer> tokenizer;
  try {
    tokenizer = parse_hf_tokenizer(text, kOrigin);
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
