#pragma once
// Conversations into token ids and labels through a model's own Jinja chat template and its
// tokenizer (tokenizer.json, tiktoken or sentencepiece): the template renders the whole text,
// supervised_rendering finds the assistant turns, the tokenizer encodes the text in one piece (as
// the model's processor does) with byte offsets that map the turns onto tokens, and each image
// token the template wrote becomes the image's visual tokens. Private to ChatTokenizer;
// docs/chat-templates.md is its specification.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/conversation.hpp"
#include "odbatch/text/jinja_template.hpp"
#include "odbatch/text/supervised_rendering.hpp"
#include "odbatch/text/text_tokenizer.hpp"
#include "odbatch/text/tokenize_result.hpp"
#include "odbatch/text/tokenizer_options.hpp"

namespace odbatch {

class JinjaChatEncoder {
 public:
  // `template_source` is the Jinja text; `variables` the bos_token, eos_token... it sees. Throws
  // ConfigError (field template_file) when the template does not parse.
  JinjaChatEncoder(std::unique_ptr<const TextTokenizer> tokenizer, const TokenizerOptions& options,
                   const std::string& template_source, std::string_view template_origin,
                   jinja::Dict variables);

  // input_ids, labels and image spans, cut to max_seq_len (truncated set); the caller checks
  // that there is a visual token count per image, and applies over_length and zero_labels.
  // `extra` are further variables for this conversation (ChatTokenizer's TemplateVariables).
  TokenizeResult tokenize(const Conversation& conversation,
                          std::span<const std::uint32_t> visual_tokens_per_image,
                          const std::map<std::string, std::string>& extra = {}) const;
  // The template's text and supervised ranges, or the error tokenize would give.
  std::variant<SupervisedRendering, TokenizeError> render(
      const Conversation& conversation, const std::map<std::string, std::string>& extra = {}) const;

  const TextTokenizer& tokenizer() const { return *tokenizer_; }

 private:
  // The messages as the template sees them, or the error of a message that cannot be shown.
  std::variant<std::vector<jinja::Value>, TokenizeError> template_messages(
      const Conversation& conversation) const;

  std::unique_ptr<const TextTokenizer> tokenizer_;
  TokenizerOptions options_;
  jinja::Template template_;
  jinja::Dict variables_;
  jinja::RenderOptions render_options_;     // strftime_now's day
  std::optional<TokenId> image_id_;         // image_piece, when a single token of the tokenizer
  std::string image_text_;                  // image_content text: what <image> becomes
  std::vector<std::string> special_texts_;  // refused in message text
};

}  // namespace odbatch
