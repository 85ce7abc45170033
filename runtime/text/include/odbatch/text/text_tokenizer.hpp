#pragma once
// One interface for the tokenizers a model may ship: a Hugging Face tokenizer.json (byte-level
// BPE) and a tiktoken ranks file. Implementations are immutable after loading, so every method
// is const and thread-safe: a pool of workers may share one tokenizer.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch {

using TokenId = std::uint32_t;

struct TextEncodeOptions {
  // Special tokens written in the text ("<|im_start|>") become their ids; when false they are
  // encoded as ordinary text (Hugging Face's split_special_tokens, tiktoken's encode_ordinary).
  bool recognize_special_tokens = true;
  // Applies the tokenizer's post-processor (a BOS token, say), as Hugging Face's
  // add_special_tokens does; tokenizers without one ignore it.
  bool add_special_tokens = false;
};

// The bytes [begin, end) of the encoded text that a token stands for. Tokens a post-processor
// adds (a BOS) have an empty range where they were inserted (0, or the text's end), as does a
// space that ByteLevel's add_prefix_space inserted. A tokenizer.json token of text that
// normalization changed has the range of the whole chunk it came from, chunks beginning at ASCII
// characters; sentencepiece maps its own normalization back (see "Offsets" in
// docs/text-tokenizers.md). So a range always covers the token's origin.
struct TokenOffsets {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const TokenOffsets&, const TokenOffsets&) = default;
};

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;

  // Appends the ids of `text` (UTF-8) to `ids`.
  void encode_into(std::string_view text, const TextEncodeOptions& options,
                   std::vector<TokenId>& ids) const {
    encode_tokens(text, options, ids, nullptr);
  }
  std::vector<TokenId> encode(std::string_view text, const TextEncodeOptions& options = {}) const {
    std::vector<TokenId> ids;
    encode_into(text, options, ids);
    return ids;
  }
  // The same ids, and each token's byte range in `text` appended to `offsets`: what a caller
  // needs to map character spans (a chat template's supervised turns) onto tokens.
  void encode_with_offsets_into(std::string_view text, const TextEncodeOptions& options,
                                std::vector<TokenId>& ids,
                                std::vector<TokenOffsets>& offsets) const {
    if (text.size() > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument("text of " + std::to_string(text.size()) +
                                  " bytes is too long for 32-bit token offsets");
    encode_tokens(text, options, ids, &offsets);
  }

  // The text of `ids`; bytes that do not form valid UTF-8 (a sequence cut inside a character)
  // become U+FFFD, as the reference libraries decode. Unknown ids throw std::out_of_range.
  virtual std::string decode(std::span<const TokenId> ids,
                             bool skip_special_tokens = false) const = 0;

  // The token as the model's vocabulary spells it (byte-level symbols for byte-level BPE).
  virtual std::optional<TokenId> token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> id_to_token(TokenId id) const = 0;

  // One past the largest id, added tokens included: the rows an embedding needs.
  virtual std::uint32_t vocab_size() const = 0;
  // Ids of the special tokens (control tokens such as <|im_end|>), ascending.
  virtual std::span<const TokenId> special_token_ids() const = 0;

 protected:
  // Appends ids, and their offsets unless `offsets` is null (computing them costs extra only
  // then).
  virtual void encode_tokens(std::string_view text, const TextEncodeOptions& options,
                             std::vector<TokenId>& ids,
                             std::vector<TokenOffsets>* offsets) const = 0;
};

}  // namespace odbatch
