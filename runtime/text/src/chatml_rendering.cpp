// "<|im_start|>{role}\n{content}<|im_end|>\n" per message, as Qwen2-VL renders it. The role
// header is encoded on its own, so a message's content encodes the same way whatever its role.
#include <cstddef>

#include "template_rendering.hpp"

namespace odbatch {

void render_chatml(const Conversation& conversation, const TemplateSettings& settings,
                   TokenSequenceBuilder& builder) {
  const TemplateTokens& tokens = settings.tokens;
  if (settings.add_bos) builder.token(tokens.bos, false);
  const bool has_system =
      !conversation.messages.empty() && conversation.messages.front().role == Role::system;
  if (settings.default_system_prompt && !has_system) {
    builder.begin_default_system_prompt();
    builder.token(tokens.im_start, false);
    builder.tokens(tokens.role_headers[static_cast<std::size_t>(Role::system)], false);
    builder.text(*settings.default_system_prompt, false);
    builder.token(tokens.im_end, false);
    builder.tokens(tokens.turn_separator, false);
  }
  for (std::size_t index = 0; index < conversation.messages.size(); ++index) {
    const Message& message = conversation.messages[index];
    // The assistant's reply and its end of turn are learned; the separator after it is not.
    const bool supervised = message.role == Role::assistant;
    builder.begin_message(index);
    builder.token(tokens.im_start, false);
    builder.tokens(tokens.role_headers[static_cast<std::size_t>(message.role)], false);
    builder.content(message.content, supervised);
    builder.token(tokens.im_end, supervised);
    builder.tokens(tokens.turn_separator, false);
  }
}

}  // namespace odbatch
