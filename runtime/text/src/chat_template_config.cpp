#include "odbatch/text/chat_template_config.hpp"

#include <nlohmann/json.hpp>

#include "odbatch/source/regular_file.hpp"

namespace odbatch {
namespace {

std::string read_text(const std::filesystem::path& path) {
  try {
    return read_regular_file(path.string(), kMaxTemplateFileBytes);
  } catch (const FileReadError& e) {
    throw ChatTemplateConfigError(e.what());
  }
}

std::optional<std::string> special_token(const nlohmann::json& config, const char* key,
                                         std::string_view source) {
  const auto found = config.find(key);
  if (found == config.end() || found->is_null()) return std::nullopt;
  if (found->is_string()) return found->get<std::string>();
  if (found->is_object()) {
    const auto content = found->find("content");
    if (content != found->end() && content->is_string()) return content->get<std::string>();
  }
  throw ChatTemplateConfigError(std::string(source) + ": \"" + key +
                                "\" must be a string or an object with a string \"content\"");
}

std::string choose_template(const nlohmann::json& chat_template, std::string_view source,
                            std::string_view template_name) {
  if (chat_template.is_string()) return chat_template.get<std::string>();
  if (!chat_template.is_array())
    throw ChatTemplateConfigError(std::string(source) +
                                  ": \"chat_template\" must be a string or a list of "
                                  "{\"name\", \"template\"} objects");
  std::string names;
  for (const auto& entry : chat_template) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string())
      throw ChatTemplateConfigError(std::string(source) +
                                    ": each \"chat_template\" entry needs string \"name\" and "
                                    "\"template\" fields");
    if (entry["name"].get<std::string>() == template_name)
      return entry["template"].get<std::string>();
    names += (names.empty() ? "" : ", ") + entry["name"].get<std::string>();
  }
  throw ChatTemplateConfigError(std::string(source) + ": no chat template named \"" +
                                std::string(template_name) + "\" (it has: " + names + ")");
}

}  // namespace

ChatTemplateConfig parse_tokenizer_config(std::string_view json, std::string_view source,
                                          std::string_view template_name) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw ChatTemplateConfigError(std::string(source) + ": invalid JSON: " + e.what());
  }
  if (!config.is_object())
    throw ChatTemplateConfigError(std::string(source) + ": expected a JSON object");
  const auto chat_template = config.find("chat_template");
  if (chat_template == config.end() || chat_template->is_null())
    throw ChatTemplateConfigError(std::string(source) + ": has no \"chat_template\"");
  ChatTemplateConfig result;
  result.chat_template = choose_template(*chat_template, source, template_name);
  result.bos_token = special_token(config, "bos_token", source);
  result.eos_token = special_token(config, "eos_token", source);
  result.pad_token = special_token(config, "pad_token", source);
  result.unk_token = special_token(config, "unk_token", source);
  return result;
}

ChatTemplateConfig load_tokenizer_config(const std::filesystem::path& tokenizer_config,
                                         std::string_view template_name) {
  return parse_tokenizer_config(read_text(tokenizer_config), tokenizer_config.string(),
                                template_name);
}

std::string load_jinja_file(const std::filesystem::path& path) {
  return read_text(path);
}

void add_special_tokens(const ChatTemplateConfig& config, jinja::Dict& variables) {
  const std::pair<const char*, const std::optional<std::string>*> tokens[] = {
      {"bos_token", &config.bos_token},
      {"eos_token", &config.eos_token},
      {"pad_token", &config.pad_token},
      {"unk_token", &config.unk_token}};
  for (const auto& [name, token] : tokens)
    if (token->has_value()) variables.set(name, jinja::Value(**token));
}

}  // namespace odbatch
