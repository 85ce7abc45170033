#include "odbatch/text/chat_template.hpp"

namespace odbatch {

std::string_view to_string(ChatTemplate chat_template) {
  switch (chat_template) {
    case ChatTemplate::chatml:
      return "chatml";
    case ChatTemplate::llama2:
      return "llama2";
    case ChatTemplate::jinja:
      return "jinja";
  }
  return "unknown";
}

std::optional<ChatTemplate> parse_chat_template(std::string_view name) {
  for (const auto candidate : {ChatTemplate::chatml, ChatTemplate::llama2, ChatTemplate::jinja})
    if (to_string(candidate) == name) return candidate;
  return std::nullopt;
}

}  // namespace odbatch
