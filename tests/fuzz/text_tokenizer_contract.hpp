#pragma once
// What a loaded TextTokenizer promises the fuzz targets of its files: a short text encodes, with
// and without offsets, into ids that decode; a text may be refused only with
// std::invalid_argument (a pattern's match limit), as the chat tokenizer rejects a record.
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch::fuzz {

inline void check_short_text_encodes(const TextTokenizer& tokenizer, std::string_view target) {
  constexpr std::string_view kText = "Hello <|im_start|>wörld 12345\n\n  <s>tab\there!";
  try {
    std::vector<TokenId> ids, with_offsets;
    std::vector<TokenOffsets> offsets;
    tokenizer.encode_into(kText, {}, ids);
    tokenizer.encode_with_offsets_into(kText, {.recognize_special_tokens = false}, with_offsets,
                                       offsets);
    expect(offsets.size() == with_offsets.size(), target, "every token has an offset");
    for (const TokenOffsets& range : offsets)
      expect(range.begin <= range.end && range.end <= kText.size(), target,
             "offsets lie within the text");
    for (const TokenId id : ids) expect(id < tokenizer.vocab_size(), target, "ids are in range");
    tokenizer.decode(ids);
  } catch (const std::invalid_argument&) {
    // The text refused, as a record is.
  } catch (const std::exception& e) {
    contract_broken(target, std::string("a short text encodes and decodes, but: ") + e.what());
  }
}

// A tokenizer file's promises: `load` returns a tokenizer, which then encodes a short text, or
// throws TokenizerModelError naming the file `origin`, never another exception.
template <typename Load>
Outcome check_tokenizer_file(Load load, std::string_view origin, std::string_view target) {
  std::unique_ptr<TextTokenizer> tokenizer;
  try {
    tokenizer = load();
  } catch (const TokenizerModelError& e) {
    expect(std::string_view(e.what()).starts_with("tokenizer.model: " + std::string(origin)),
           target, "a load error names the file");
    return Outcome::rejected;
  } catch (const std::exception& e) {
    contract_broken(target,
                    std::string("loading throws only TokenizerModelError, not: ") + e.what());
  }
  check_short_text_encodes(*tokenizer, target);
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
