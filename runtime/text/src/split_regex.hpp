#pragma once
// A compiled pre-tokenizer regex (PCRE2, UTF and Unicode properties, JIT-compiled), matched the
// way the reference tokenizers split text: leftmost matches, left to right, never overlapping.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch::text_detail {

// Matching a text spent its budget or hit one of the limits below, or failed otherwise: the text is
// refused, not the tokenizer (an std::invalid_argument, as for any text that cannot be encoded).
// The message names the pattern, cut to kPatternQuoteBytes, and the limit.
class RegexMatchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Matching one text is charged against one budget, so that a pattern with catastrophic
// backtracking, or one that rescans the rest of the text at every match (`a(?=a*b)|a`), costs one
// refused text, not minutes. Each match call first sees a window of kFreeWindowBytes from where it
// starts, under a match limit (PCRE2's count of backtracking steps, which JIT-compiled matching
// counts too) of kFreeMatchSteps; PCRE2's hard partial matching says when a result could change
// with more text, and only then is the window doubled, as the limit is when hit. A call's first
// try is not charged: each call moves at least one character on, so first tries cost a bounded
// amount per byte in all. Every later try is charged its limit plus its window's bytes. Real
// pre-tokenizer matches are short; a run of white space costs about 14 per byte. The depth and heap
// limits bound the interpreter, used when JIT is unavailable; JIT matching is bounded by its stack
// instead (kJitStackBytes).
inline constexpr std::size_t kFreeWindowBytes = 64;
inline constexpr std::uint32_t kFreeMatchSteps = 256;
inline constexpr std::uint64_t kMatchBudgetBase = 10'000'000;
inline constexpr std::uint64_t kMatchBudgetPerByte = 32;
inline constexpr std::uint32_t kMatchDepthLimit = 1'000'000;
inline constexpr std::uint32_t kMatchHeapLimitKib = 64 * 1024;
inline constexpr std::size_t kJitStackBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kPatternQuoteBytes = 80;

// The match budget for a text of `bytes` bytes.
std::uint64_t match_step_budget(std::size_t bytes);

struct MatchSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

class SplitRegex {
 public:
  // Throws std::invalid_argument naming the offset and PCRE2's reason when the pattern does not
  // compile. `\s` and `\S` mean Unicode White_Space (as Oniguruma and Rust's regex define them;
  // PCRE2's own \s also matches U+180E).
  explicit SplitRegex(std::string_view pattern);
  SplitRegex(SplitRegex&&) noexcept;
  SplitRegex& operator=(SplitRegex&&) noexcept;
  ~SplitRegex();

  // Appends the matches in `text` to `matches` (byte offsets into `text`); lookaround sees only
  // `text`. After an empty match the search resumes one character further. Throws
  // RegexMatchError when matching spends the budget or hits a limit above.
  void find_all(std::string_view text, std::vector<MatchSpan>& matches) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::string pattern_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace odbatch::text_detail
