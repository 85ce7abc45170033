// A model's tokenizer.json as the chat tokenizer loads it, then a short text encoded with it.
#include <string>

#include "fuzz_entries.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "text_tokenizer_contract.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "tokenizer_json";
constexpr std::string_view kOrigin = "fuzz/tokenizer.json";

}  // namespace

Outcome tokenizer_json(Input input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  return check_tokenizer_file([&] { return parse_hf_tokenizer(text, kOrigin); }, kOrigin, kTarget);
}

}  // namespace odbatch::fuzz
