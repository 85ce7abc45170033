#pragma once
// Builds one sample's token sequence from the parts a chat template renders: ordinary text,
// tokens emitted by id, and images, held to max_seq_len as it grows. Private to the tokenizer.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "exact_cuts.hpp"
#include "odbatch/core/conversation.hpp"
#include "odbatch/core/role_name.hpp"
#include "odbatch/text/tokenize_result.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace odbatch {

// The model and the ids a sequence is built from; fixed for a tokenizer's lifetime.
struct SequenceVocabulary {
  const sentencepiece::SentencePieceProcessor* model = nullptr;
  int image = -1;
  int vision_start = -1;
  int vision_end = -1;
  // Pieces the template emits only by id. Text that encodes to one of them is an error: it would
  // read as template structure or as an image token without an image.
  std::vector<int> reserved;
  // Where a long text may be cut so that the text before the cut encodes to the pieces the whole
  // text's encoding starts with (see exact_cuts_of), so that it can be encoded only as far as the
  // sequence can hold.
  ExactCuts cuts;
};

class TokenSequenceBuilder {
 public:
  TokenSequenceBuilder(const SequenceVocabulary& vocabulary, const Conversation& conversation,
                       std::span<const std::uint32_t> visual_tokens_per_image,
                       std::uint32_t max_seq_len);

  // Attributes the text that follows to message `index`, or to the default system prompt, for
  // error messages.
  void begin_message(std::size_t index) { location_ = index; }
  void begin_default_system_prompt() { location_ = kDefaultSystemPrompt; }

  // Ordinary text. Consecutive text of equal supervision forms one segment, encoded by one call.
  void text(std::string_view text, bool supervised);
  // A message's content: text with kImagePlaceholder where the next image goes. Image tokens are
  // never supervised.
  void content(std::string_view content, bool supervised);
  // Tokens emitted by id (special pieces, or fixed template text encoded once beforehand).
  void token(int id, bool supervised);
  void tokens(std::span<const int> ids, bool supervised);

  // Past max_seq_len nothing more is kept: text there is not encoded (a long segment is encoded
  // only up to a point past the limit), and an image there is an over_length error.

  // Records the first error; every part after it is ignored.
  void fail(TokenizeErrorReason reason, std::string message);
  bool failed() const { return error_.has_value(); }
  // "message 3 (user)" or "the default system prompt": where the current part comes from.
  std::string location() const { return describe(location_); }

  // The sequence's first max_seq_len tokens, `truncated` when it was longer (supervised_targets
  // not counted), or the first error. Called once, last.
  TokenizeResult finish();

 private:
  static constexpr std::size_t kDefaultSystemPrompt = static_cast<std::size_t>(-1);

  void flush_text();
  // Encodes into encoded_ the text, or a prefix of it that yields at least `wanted` pieces: the
  // pieces the whole text's encoding starts with.
  void encode_leading(std::string_view text, std::size_t wanted);
  void encode(std::string_view text);
  void image();
  // Both keep what fits within max_seq_len and note whether anything did not.
  void append(std::span<const int> ids, bool supervised);
  void push(int id, bool supervised);
  std::string describe(std::size_t location) const;

  const SequenceVocabulary& vocabulary_;
  const Conversation& conversation_;
  std::span<const std::uint32_t> visual_tokens_per_image_;
  std::uint32_t max_seq_len_;

  std::size_t location_ = 0;
  std::string pending_text_;  // the segment being gathered
  bool pending_supervised_ = false;
  std::size_t pending_from_ = 0;  // locations of its first and last text
  std::size_t pending_to_ = 0;
  std::vector<int> encoded_;  // reused by every segment's Encode call
  std::size_t next_image_ = 0;
  bool past_max_seq_len_ = false;  // a part did not fit: sample_ holds max_seq_len tokens
  TokenizedSample sample_;
  std::optional<TokenizeError> error_;
};

}  // namespace odbatch
