#pragma once
// Where a long text can be cut without changing how its beginning encodes. Private to the
// tokenizer, which finds the points from its model's vocabulary (exact_cuts_of).
#include <algorithm>
#include <bitset>
#include <cstddef>
#include <string_view>

namespace odbatch {

// Points in a text, between two printable ASCII characters x and y, where no piece of the model
// can span: text cut there encodes, up to the cut, to the pieces of the whole text.
class ExactCuts {
 public:
  // No cut: every text is encoded whole.
  ExactCuts() = default;
  // Cuts where y is a space, and where `pair_is_cut(x, y)`.
  template <typename PairIsCut>
  explicit ExactCuts(PairIsCut pair_is_cut) : before_spaces_(true) {
    for (char x = '!'; x <= '~'; ++x)
      for (char y = '!'; y <= '~'; ++y) between_[index(x, y)] = pair_is_cut(x, y);
  }

  bool any() const { return before_spaces_; }
  // The first position at or after `from` (and at least 1) that is a cut; the text's size when
  // there is none.
  std::size_t first_at_or_after(std::string_view text, std::size_t from) const {
    if (!before_spaces_) return text.size();
    for (std::size_t at = std::max<std::size_t>(from, 1); at < text.size(); ++at) {
      const char x = text[at - 1];
      const char y = text[at];
      if (printable_but_space(x) && (y == ' ' || (printable_but_space(y) && between_[index(x, y)])))
        return at;
    }
    return text.size();
  }

 private:
  static bool printable_but_space(char c) { return c > ' ' && c < '\x7f'; }
  static std::size_t index(char x, char y) {
    return static_cast<std::size_t>(static_cast<unsigned char>(x)) * 128 +
           static_cast<unsigned char>(y);
  }

  bool before_spaces_ = false;
  std::bitset<128 * 128> between_;
};

}  // namespace odbatch
