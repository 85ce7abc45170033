#pragma once
// Finds a tokenizer.json's added tokens in text as the Hugging Face library does, in time linear
// in the text and the tokens' total length, however many tokens there are.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "odbatch/text/text_tokenizer.hpp"
#include "split_regex.hpp"

namespace odbatch::text_detail {

struct AddedToken {
  std::string content;  // normalized already when `normalized`
  TokenId id = 0;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// A part of the text: an added token's id, or text still to tokenize.
struct TextSplit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::optional<TokenId> id;
};

// Leftmost-longest matches, left to right; a single_word token only between non-word
// characters; lstrip and rstrip take the white space beside the token into it.
class AddedTokenMatcher {
 public:
  // The tokens must outlive the matcher and have distinct, non-empty contents.
  explicit AddedTokenMatcher(std::span<const AddedToken* const> tokens);

  void split(std::string_view text, bool recognize_special, std::vector<TextSplit>& splits) const;

 private:
  // The automaton's state after a byte: the child of `state`, or through its fallbacks.
  std::uint32_t next_state(std::uint32_t state, unsigned char byte) const;
  // For each position of `text`, the index in tokens_ of the longest token that begins there, or
  // kNoToken.
  void longest_tokens_at(std::string_view text, std::vector<std::uint32_t>& longest) const;
  bool word_character_before(std::string_view text, std::size_t begin) const;
  bool word_character_after(std::string_view text, std::size_t end) const;
  bool word_character(std::string_view character) const;

  static constexpr std::uint32_t kNoToken = UINT32_MAX;

  // An Aho-Corasick automaton over the tokens' contents reversed: run over the text backwards,
  // its state's longest token is the longest token that begins at the current position.
  struct State {
    std::uint32_t fallback = 0;  // the state of the longest proper suffix that is a state
    std::uint32_t longest_token = kNoToken;
  };
  std::vector<State> states_;
  std::unordered_map<std::uint64_t, std::uint32_t> children_;  // by state << 8 | byte
  std::vector<const AddedToken*> tokens_;
  SplitRegex word_character_;
};

}  // namespace odbatch::text_detail
