#pragma once
// What tokenizing a conversation yields: a TokenizedSample, or the reason the conversation cannot
// become a sample.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "odbatch/proto_msgs/tokenized_sample.hpp"

namespace odbatch {

enum class TokenizeErrorReason : std::uint8_t {
  over_length,            // over max_seq_len under reject, or an image not wholly within it
  no_supervised_tokens,   // no target left for the loss under zero_labels = reject
  image_mismatch,         // placeholders, images and visual token counts disagree, or an image
                          // has no visual token
  unsupported_roles,      // no messages, or a role order the template cannot express
  special_piece_in_text,  // message text that encodes to a piece the template emits by id
                          // (or, with a Jinja template, holds a special token's text)
  template_refused,       // the Jinja chat template raised an error for the conversation, or
                          // its assistant turns cannot be found by rendering
};

std::string_view to_string(TokenizeErrorReason reason);

// What an over_length rejection says to change: for one an image causes (a model's real
// max_pixels makes images of thousands of tokens), and for one its text causes.
inline constexpr std::string_view kImageOverLengthRemedy =
    " (lower images.max_pixels, or raise batching.max_seq_len)";
inline constexpr std::string_view kTextOverLengthRemedy =
    " (raise batching.max_seq_len, or set batching.over_length = \"truncate\")";

struct TokenizeError {
  TokenizeErrorReason reason = TokenizeErrorReason::over_length;
  std::string message;  // names the message (index and role) or image concerned

  friend bool operator==(const TokenizeError&, const TokenizeError&) = default;
};

using TokenizeResult = std::variant<TokenizedSample, TokenizeError>;

}  // namespace odbatch
