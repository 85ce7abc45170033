#pragma once
// A compiled pre-tokenizer regex (PCRE2, UTF and Unicode properties, JIT-compiled), matched the
// way the reference tokenizers split text: leftmost matches, left to right, never overlapping.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch::text_detail {

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
  // `text`. After an empty match the search resumes one character further.
  void find_all(std::string_view text, std::vector<MatchSpan>& matches) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::string pattern_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace odbatch::text_detail
