#pragma once
// Turns conversations into token ids and training labels with a sentencepiece model and a chat
// template. docs/tokenization.md describes the templates, supervision and truncation exactly.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "odbatch/core/config.hpp"
#include "odbatch/core/conversation.hpp"
#include "odbatch/text/chat_template.hpp"
#include "odbatch/text/supervised_rendering.hpp"
#include "odbatch/text/tokenize_result.hpp"
#include "odbatch/text/tokenizer_options.hpp"

namespace odbatch {

// A model that cannot serve the options: not a regular file, unreadable, not a sentencepiece
// model, or lacking a piece or control token the template needs. A ConfigError of the field
// tokenizer.model: "tokenizer.model: <path>: <problem>".
class TokenizerModelError : public ConfigError {
 public:
  TokenizerModelError(const std::filesystem::path& model, const std::string& problem);
  const std::filesystem::path& model() const { return model_; }

 private:
  std::filesystem::path model_;
};

// The bytes of a tokenizer model file, read the way ChatTokenizer reads them: opened without
// blocking (a FIFO or a device cannot hang the open) and read only if it is a regular file of at
// most kMaxTokenizerModelBytes. Throws TokenizerModelError.
inline constexpr std::uint64_t kMaxTokenizerModelBytes = std::uint64_t{1} << 30;
std::string read_tokenizer_model_file(const std::filesystem::path& model);

// Two engines behind one interface (docs/tokenization.md, docs/chat-templates.md): the chatml
// and llama2 presets render straight into a sentencepiece model's ids; a model's Jinja template
// (or the chatml preset over a tokenizer.json or tiktoken file) renders text that the model's
// tokenizer encodes whole, with supervision found by rendering (supervised_rendering.hpp).
// Thread-safe: tokenize() is const and touches no shared mutable state, so a pool of workers may
// share one tokenizer.
// Variables a record's template sees beside its messages and the special tokens, by name.
using TemplateVariables = std::map<std::string, std::string>;

class ChatTokenizer {
 public:
  // Loads the model (read as options.format says) and the template. Throws ConfigError for
  // invalid options or templates and TokenizerModelError when the model cannot be loaded or lacks
  // a piece the options or the template need.
  ChatTokenizer(const std::filesystem::path& model, TokenizerOptions options);
  ChatTokenizer(ChatTokenizer&&) noexcept;
  ChatTokenizer& operator=(ChatTokenizer&&) noexcept;
  ~ChatTokenizer();

  // Renders the conversation with the template and encodes it; image i of the conversation
  // becomes visual_tokens_per_image[i] image tokens. `variables` are further variables a Jinja
  // template sees for this conversation (set by record stages; a preset takes none). Bad input is
  // a TokenizeError, never thrown.
  TokenizeResult tokenize(const Conversation& conversation,
                          std::span<const std::uint32_t> visual_tokens_per_image,
                          const TemplateVariables& variables = {}) const;

  // The text the template renders for the conversation and its supervised byte ranges, or why
  // the conversation is refused: what `odbatch render` shows. The presets over sentencepiece
  // render into ids directly: their text is the ids decoded, without ranges.
  std::variant<SupervisedRendering, TokenizeError> render(
      const Conversation& conversation,
      std::span<const std::uint32_t> visual_tokens_per_image) const;
  // A token as the vocabulary spells it ("" for an id outside it).
  std::string token_text(std::uint32_t id) const;

  const TokenizerOptions& options() const;
  // Token ids are below it: the rows a trainer's embedding needs.
  std::uint32_t vocab_size() const;

 private:
  TokenizeResult render_preset(const Conversation& conversation,
                               std::span<const std::uint32_t> visual_tokens_per_image) const;

  struct Impl;
  std::unique_ptr<const Impl> impl_;
};

}  // namespace odbatch
