#include "added_token_matcher.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <deque>

#include "utf8_text.hpp"

namespace odbatch::text_detail {
namespace {

// Unicode White_Space (Rust's char::is_whitespace), which lstrip and rstrip remove.
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

char32_t code_point_at(std::string_view text, std::size_t i) {
  utf8proc_int32_t code_point = 0;
  utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                   static_cast<utf8proc_ssize_t>(text.size() - i), &code_point);
  return static_cast<char32_t>(code_point);
}

std::size_t previous_character(std::string_view text, std::size_t end) {
  std::size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

std::uint64_t child_key(std::uint32_t state, unsigned char byte) {
  return std::uint64_t{state} << 8 | byte;
}

}  // namespace

// A word character as the reference's \w (Rust's regex crate) defines it.
AddedTokenMatcher::AddedTokenMatcher(std::span<const AddedToken* const> tokens)
    : tokens_(tokens.begin(), tokens.end()),
      word_character_(R"(^[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}])") {
  // The trie of the reversed contents, with each state's children for the breadth-first pass.
  states_.emplace_back();
  std::vector<std::vector<std::pair<unsigned char, std::uint32_t>>> children(1);
  for (std::uint32_t index = 0; index < tokens_.size(); ++index) {
    std::uint32_t state = 0;
    const std::string& content = tokens_[index]->content;
    for (auto byte = content.rbegin(); byte != content.rend(); ++byte) {
      const auto key = child_key(state, static_cast<unsigned char>(*byte));
      const auto [child, added] =
          children_.try_emplace(key, static_cast<std::uint32_t>(states_.size()));
      if (added) {
        states_.emplace_back();
        children.emplace_back();
        children[state].emplace_back(static_cast<unsigned char>(*byte), child->second);
      }
      state = child->second;
    }
    // Two tokens normalized to the same content: the one added first wins, as before.
    if (states_[state].longest_token == kNoToken) states_[state].longest_token = index;
  }
  // Fallbacks in breadth-first order, so a state's fallback is final before its children's.
  std::deque<std::uint32_t> queue{0};
  while (!queue.empty()) {
    const std::uint32_t state = queue.front();
    queue.pop_front();
    for (const auto& [byte, child] : children[state]) {
      if (state != 0) {
        const std::uint32_t fallback = next_state(states_[state].fallback, byte);
        states_[child].fallback = fallback;
        // A state's own token is longer than any of its suffixes'.
        if (states_[child].longest_token == kNoToken)
          states_[child].longest_token = states_[fallback].longest_token;
      }
      queue.push_back(child);
    }
  }
}

std::uint32_t AddedTokenMatcher::next_state(std::uint32_t state, unsigned char byte) const {
  while (true) {
    if (const auto child = children_.find(child_key(state, byte)); child != children_.end())
      return child->second;
    if (state == 0) return 0;
    state = states_[state].fallback;
  }
}

void AddedTokenMatcher::longest_tokens_at(std::string_view text,
                                          std::vector<std::uint32_t>& longest) const {
  longest.resize(text.size());
  std::uint32_t state = 0;
  for (std::size_t position = text.size(); position-- > 0;) {
    state = next_state(state, static_cast<unsigned char>(text[position]));
    longest[position] = states_[state].longest_token;
  }
}

void AddedTokenMatcher::split(std::string_view text, bool recognize_special,
                              std::vector<TextSplit>& splits) const {
  thread_local std::vector<std::uint32_t> longest;
  if (tokens_.empty()) {
    if (!text.empty()) splits.push_back({0, text.size(), std::nullopt});
    return;
  }
  longest_tokens_at(text, longest);
  std::size_t done = 0;
  for (std::size_t position = 0; position < text.size();) {
    if (longest[position] == kNoToken) {
      ++position;
      continue;
    }
    const AddedToken* token = tokens_[longest[position]];
    std::size_t begin = position;
    std::size_t end = position + token->content.size();
    position = end;
    // An unrecognised special token stays text, and the search resumes after it, as the
    // reference's matcher skips that match.
    if (token->special && !recognize_special) continue;
    if (token->single_word &&
        (word_character_before(text, begin) || word_character_after(text, end)))
      continue;
    if (token->lstrip) {
      std::size_t stripped = begin;
      while (stripped > 0) {
        const std::size_t previous = previous_character(text, stripped);
        if (!is_white_space(code_point_at(text, previous))) break;
        stripped = previous;
      }
      begin = std::max(stripped, done);
    }
    if (token->rstrip) {
      while (end < text.size()) {
        const char32_t c = code_point_at(text, end);
        if (!is_white_space(c)) break;
        utf8proc_uint8_t utf8[4];
        end +=
            static_cast<std::size_t>(utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), utf8));
      }
    }
    if (done < begin) splits.push_back({done, begin, std::nullopt});
    splits.push_back({begin, end, token->id});
    done = end;
  }
  if (done < text.size()) splits.push_back({done, text.size(), std::nullopt});
}

bool AddedTokenMatcher::word_character(std::string_view character) const {
  thread_local std::vector<MatchSpan> matches;
  matches.clear();
  word_character_.find_all(character, matches);
  return !matches.empty();
}

bool AddedTokenMatcher::word_character_before(std::string_view text, std::size_t begin) const {
  if (begin == 0) return false;
  const std::size_t previous = previous_character(text, begin);
  return word_character(text.substr(previous, begin - previous));
}

bool AddedTokenMatcher::word_character_after(std::string_view text, std::size_t end) const {
  if (end == text.size()) return false;
  return word_character(text.substr(end, valid_sequence_length(text, end)));
}

}  // namespace odbatch::text_detail
