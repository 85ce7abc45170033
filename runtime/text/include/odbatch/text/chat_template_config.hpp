#pragma once
// Where a model's Jinja chat template and its special tokens come from: the chat_template and
// bos/eos/pad/unk tokens of a Hugging Face tokenizer_config.json, or a standalone .jinja file.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "odbatch/text/jinja_value.hpp"

namespace odbatch {

// A tokenizer_config.json or .jinja file that cannot provide a chat template; names the file and
// what is wrong with it.
class ChatTemplateConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest tokenizer_config.json or .jinja file read: real ones are kilobytes, a config listing
// every added token of a large vocabulary a few megabytes.
inline constexpr std::uint64_t kMaxTemplateFileBytes = std::uint64_t{64} << 20;

struct ChatTemplateConfig {
  std::string chat_template;  // the Jinja source
  // Each is either a plain string in the file or an AddedToken object's "content".
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> pad_token;
  std::optional<std::string> unk_token;
};

// chat_template is a string, or a list of {"name", "template"} entries of which template_name is
// chosen (transformers' default name is "default").
ChatTemplateConfig load_tokenizer_config(const std::filesystem::path& tokenizer_config,
                                         std::string_view template_name = "default");
// Parses tokenizer_config.json text; source names it in errors.
ChatTemplateConfig parse_tokenizer_config(std::string_view json, std::string_view source,
                                          std::string_view template_name = "default");
// A .jinja file's text, exactly (jinja2 itself drops one trailing newline when it parses).
std::string load_jinja_file(const std::filesystem::path& path);

// Sets bos_token, eos_token, pad_token and unk_token as transformers passes them to templates
// (only those the config defines).
void add_special_tokens(const ChatTemplateConfig& config, jinja::Dict& variables);

}  // namespace odbatch
