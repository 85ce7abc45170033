#include "odbatch/text/tokenizer_options.hpp"

#include <cstddef>
#include <iterator>
#include <utility>

#include "odbatch/core/conversation.hpp"
#include "odbatch/text/tiktoken_presets.hpp"

namespace odbatch {

std::string_view to_string(TokenizerFormat format) {
  switch (format) {
    case TokenizerFormat::automatic:
      return "auto";
    case TokenizerFormat::sentencepiece:
      return "sentencepiece";
    case TokenizerFormat::hf_json:
      return "tokenizer.json";
    case TokenizerFormat::tiktoken:
      return "tiktoken";
  }
  return "unknown";
}

std::optional<TokenizerFormat> parse_tokenizer_format(std::string_view name) {
  for (const auto candidate : {TokenizerFormat::automatic, TokenizerFormat::sentencepiece,
                               TokenizerFormat::hf_json, TokenizerFormat::tiktoken})
    if (to_string(candidate) == name) return candidate;
  return std::nullopt;
}

TokenizerFormat resolved_format(TokenizerFormat format, const std::filesystem::path& model) {
  if (format != TokenizerFormat::automatic) return format;
  const auto extension = model.extension();
  if (extension == ".json") return TokenizerFormat::hf_json;
  if (extension == ".tiktoken") return TokenizerFormat::tiktoken;
  return TokenizerFormat::sentencepiece;
}

std::string_view to_string(ImageContent content) {
  return content == ImageContent::parts ? "parts" : "text";
}

std::optional<ImageContent> parse_image_content(std::string_view name) {
  for (const auto candidate : {ImageContent::parts, ImageContent::text})
    if (to_string(candidate) == name) return candidate;
  return std::nullopt;
}

std::optional<std::chrono::sys_days> parse_template_date(std::string_view date) {
  const auto digits = [&](std::size_t from, std::size_t count) -> std::optional<int> {
    int value = 0;
    for (std::size_t i = from; i < from + count; ++i) {
      if (date[i] < '0' || date[i] > '9') return std::nullopt;
      value = value * 10 + (date[i] - '0');
    }
    return value;
  };
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return std::nullopt;
  const auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  if (!year || !month || !day) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(*year),
                                        std::chrono::month(static_cast<unsigned>(*month)),
                                        std::chrono::day(static_cast<unsigned>(*day))};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd);
}

void validate(const TokenizerOptions& options) {
  if (options.max_seq_len == 0) throw ConfigError("max_seq_len", "must be at least 1");
  const std::pair<std::string_view, const std::string*> pieces[] = {
      {"image_piece", &options.image_piece},
      {"vision_start_piece", &options.vision_start_piece},
      {"vision_end_piece", &options.vision_end_piece},
  };
  for (std::size_t i = 0; i < std::size(pieces); ++i) {
    const auto& [field, piece] = pieces[i];
    if (piece->empty()) throw ConfigError(std::string(field), "must not be empty");
    for (std::size_t j = 0; j < i; ++j)
      if (*pieces[j].second == *piece)
        throw ConfigError(std::string(field), "'" + *piece + "' is already " +
                                                  std::string(pieces[j].first) +
                                                  "; the vision pieces must differ");
  }
  if (options.default_system_prompt &&
      options.default_system_prompt->find(kImagePlaceholder) != std::string::npos)
    throw ConfigError("default_system_prompt",
                      "must not contain the image placeholder " + std::string(kImagePlaceholder));

  const bool jinja = options.chat_template == ChatTemplate::jinja;
  if (jinja && options.template_file.empty())
    throw ConfigError("template_file", "is required by template = \"jinja\"");
  if (!jinja && !options.template_file.empty())
    throw ConfigError("template_file", "applies to template = \"jinja\" only, not \"" +
                                           std::string(to_string(options.chat_template)) + "\"");
  if (jinja && options.add_bos)
    throw ConfigError("add_bos",
                      "does not apply to a Jinja template, which writes bos_token itself");
  if (!jinja && (options.bos_token || options.eos_token))
    throw ConfigError(options.bos_token ? "bos_token" : "eos_token",
                      "applies to template = \"jinja\" only");
  if (options.template_name.empty()) throw ConfigError("template_name", "must not be empty");
  if (!is_tiktoken_preset(options.tiktoken_preset))
    throw ConfigError("tiktoken_preset", "'" + options.tiktoken_preset +
                                             "' is not one of cl100k_base, o200k_base, llama3");
  if (!jinja && !options.template_variables.empty())
    throw ConfigError("template_variables", "applies to template = \"jinja\" only");
  for (const std::string_view reserved : {"messages", "tools", "add_generation_prompt"})
    if (options.template_variables.contains(std::string(reserved)))
      throw ConfigError("template_variables." + std::string(reserved),
                        "set by the pipeline, not by the configuration");
  if (options.template_date && !parse_template_date(*options.template_date))
    throw ConfigError("template_date",
                      "'" + *options.template_date + "' is not a date written YYYY-MM-DD");
  if (options.image_text) {
    if (!jinja || options.image_content != ImageContent::text)
      throw ConfigError("image_text", "applies to a Jinja template with image_content = \"text\"");
    const std::size_t first = options.image_text->find(options.image_piece);
    if (first == std::string::npos ||
        options.image_text->find(options.image_piece, first + 1) != std::string::npos)
      throw ConfigError("image_text", "must hold image_piece '" + options.image_piece +
                                          "' exactly once: it stands for the visual tokens");
    if (options.image_text->find(kImagePlaceholder) != std::string::npos)
      throw ConfigError("image_text",
                        "must not contain the image placeholder " + std::string(kImagePlaceholder));
  }
}

}  // namespace odbatch
