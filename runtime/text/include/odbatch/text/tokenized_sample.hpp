#pragma once
// What tokenizing a conversation yields: token ids with their training labels, or the reason the
// conversation cannot become a sample.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace odbatch {

// The label of a position the loss ignores (PyTorch cross-entropy's ignore_index).
inline constexpr std::int32_t kIgnoreLabel = -100;

// Where one image's visual tokens sit in input_ids: `length` image tokens from `offset`, wrapped
// by the vision start token at offset - 1 and the vision end token at offset + length.
struct ImageSpan {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;

  friend bool operator==(const ImageSpan&, const ImageSpan&) = default;
};

struct TokenizedSample {
  std::vector<std::int32_t> input_ids;
  // As long as input_ids: the token itself where supervised, kIgnoreLabel elsewhere. Not shifted
  // (Hugging Face convention): the model predicts labels[i] from the positions before i.
  std::vector<std::int32_t> labels;
  // Targets the loss sees after the next-token shift: positions i >= 1 whose label is not
  // kIgnoreLabel. This is the `labels` cost of PROTOCOL.md.
  std::uint32_t supervised_targets = 0;
  std::vector<ImageSpan> images;  // one per image, in the conversation's image order
  bool truncated = false;         // cut to max_seq_len

  friend bool operator==(const TokenizedSample&, const TokenizedSample&) = default;
};

enum class TokenizeErrorReason : std::uint8_t {
  over_length,            // over max_seq_len under reject, or an image not wholly within it
  no_supervised_tokens,   // no target left for the loss under zero_labels = reject
  image_mismatch,         // placeholders, images and visual token counts disagree, or an image
                          // has no visual token
  unsupported_roles,      // no messages, or a role order the template cannot express
  special_piece_in_text,  // message text that encodes to a piece the template emits by id
};

std::string_view to_string(TokenizeErrorReason reason);

struct TokenizeError {
  TokenizeErrorReason reason = TokenizeErrorReason::over_length;
  std::string message;  // names the message (index and role) or image concerned

  friend bool operator==(const TokenizeError&, const TokenizeError&) = default;
};

using TokenizeResult = std::variant<TokenizedSample, TokenizeError>;

}  // namespace odbatch
