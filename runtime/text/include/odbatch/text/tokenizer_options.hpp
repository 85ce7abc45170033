#pragma once
// What the chat tokenizer makes of a conversation: its tokenizer file, template, length and label
// policies and special pieces (docs/tokenization.md). Apart from ChatTokenizer, so that a
// configuration holds them without the tokenizer.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "odbatch/core/config.hpp"
#include "odbatch/text/chat_template.hpp"

namespace odbatch {

// The kind of tokenizer file. automatic: "*.json" is a Hugging Face tokenizer.json, "*.tiktoken"
// a tiktoken ranks file, anything else a sentencepiece model (Llama-3's original
// tokenizer.model is a tiktoken file: say so explicitly).
enum class TokenizerFormat : std::uint8_t { automatic, sentencepiece, hf_json, tiktoken };
std::string_view to_string(TokenizerFormat format);  // "auto", "sentencepiece", "tokenizer.json",
                                                     // "tiktoken"
std::optional<TokenizerFormat> parse_tokenizer_format(std::string_view name);
// The format `model` is read as: `format` itself unless automatic.
TokenizerFormat resolved_format(TokenizerFormat format, const std::filesystem::path& model);

// How a Jinja template sees a message with images. parts: content is a list of {"type": "image"}
// and {"type": "text", "text": ...} entries, as multimodal processors pass it (Qwen2-VL's template
// writes its vision tokens for each image entry); text: content stays a string in which each
// <image> placeholder becomes image_text.
enum class ImageContent : std::uint8_t { parts, text };
std::string_view to_string(ImageContent content);
std::optional<ImageContent> parse_image_content(std::string_view name);

struct TokenizerOptions {
  TokenizerFormat format = TokenizerFormat::automatic;
  ChatTemplate chat_template = ChatTemplate::chatml;
  // chat_template jinja: a Hugging Face tokenizer_config.json (its chat_template, by
  // template_name when it holds several, and its bos/eos tokens) or a .jinja file.
  std::filesystem::path template_file;
  std::string template_name = "default";
  // The bos_token and eos_token the template sees; override the tokenizer_config.json's.
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  // tiktoken files: the split pattern and special tokens of this preset ("cl100k_base",
  // "o200k_base", "llama3").
  std::string tiktoken_preset = "cl100k_base";
  // The day a template's strftime_now() sees (Llama-3.2 writes it into every system header), as
  // "YYYY-MM-DD"; unset: the day the tokenizer was created (UTC), as transformers does, which
  // makes the tokens depend on the day: pin it for reproducible runs.
  std::optional<std::string> template_date;
  // Further variables a Jinja template sees (`date_string`, `enable_thinking`, ...), each value
  // as JSON text; a record's chat_template_kwargs override them. Not `messages`, `tools` or
  // `add_generation_prompt`, which the pipeline sets.
  std::map<std::string, std::string> template_variables;
  ImageContent image_content = ImageContent::parts;
  // image_content text: what each <image> becomes; unset: vision_start, image and vision_end
  // pieces in a row.
  std::optional<std::string> image_text;

  std::uint32_t max_seq_len = 16384;
  OverLengthPolicy over_length = OverLengthPolicy::truncate;
  ZeroLabelPolicy zero_labels = ZeroLabelPolicy::reject;
  // Pieces emitted by id; each must be a single piece of the model. A Jinja template writes them
  // itself: image_piece is then the token each image's visual tokens replace.
  std::string image_piece = "<|image_pad|>";
  std::string vision_start_piece = "<|vision_start|>";
  std::string vision_end_piece = "<|vision_end|>";
  // The system message of conversations that do not start with one; unset: none is added.
  std::optional<std::string> default_system_prompt;
  // Whether the model's BOS starts the sequence (chatml) or every [INST] pair (llama2); unset:
  // each template's own convention (chatml no, llama2 yes). A Jinja template writes bos_token
  // itself, so it takes no add_bos.
  std::optional<bool> add_bos;

  friend bool operator==(const TokenizerOptions&, const TokenizerOptions&) = default;
};

// A template_date's day; nullopt unless written YYYY-MM-DD and a real date.
std::optional<std::chrono::sys_days> parse_template_date(std::string_view date);

// Throws ConfigError naming the first invalid field.
void validate(const TokenizerOptions& options);

}  // namespace odbatch
