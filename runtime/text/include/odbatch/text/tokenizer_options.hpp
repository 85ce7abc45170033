#pragma once
// What the chat tokenizer makes of a conversation: its template, length and label policies and
// special pieces (docs/tokenization.md). Apart from ChatTokenizer, so that a configuration holds
// them without the tokenizer.
#include <cstdint>
#include <optional>
#include <string>

#include "odbatch/core/config.hpp"
#include "odbatch/text/chat_template.hpp"

namespace odbatch {

struct TokenizerOptions {
  ChatTemplate chat_template = ChatTemplate::chatml;
  std::uint32_t max_seq_len = 16384;
  OverLengthPolicy over_length = OverLengthPolicy::truncate;
  ZeroLabelPolicy zero_labels = ZeroLabelPolicy::reject;
  // Pieces emitted by id; each must be a single piece of the model.
  std::string image_piece = "<|image_pad|>";
  std::string vision_start_piece = "<|vision_start|>";
  std::string vision_end_piece = "<|vision_end|>";
  // The system message of conversations that do not start with one; unset: none is added.
  std::optional<std::string> default_system_prompt;
  // Whether the model's BOS starts the sequence (chatml) or every [INST] pair (llama2); unset:
  // each template's own convention (chatml no, llama2 yes).
  std::optional<bool> add_bos;

  friend bool operator==(const TokenizerOptions&, const TokenizerOptions&) = default;
};

// Throws ConfigError naming the first invalid field.
void validate(const TokenizerOptions& options);

}  // namespace odbatch
