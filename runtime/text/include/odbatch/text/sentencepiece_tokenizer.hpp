#pragma once
// A sentencepiece model (tokenizer.model) behind the TextTokenizer interface.
#include <filesystem>
#include <memory>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch {

// Special tokens are the model's control pieces (<s>, </s>, ...): sentencepiece never produces
// them from text, so with recognize_special_tokens their text is cut out and becomes their ids
// first. User-defined pieces are matched by sentencepiece itself, always. add_special_tokens
// prepends BOS when the model has one (as Llama's tokenizers do). decode writes a control piece's
// text unless skip_special_tokens, decoding the text between control pieces separately.
// Throws TokenizerModelError when the file is not a sentencepiece model.
std::unique_ptr<TextTokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model);

}  // namespace odbatch
