// Meta's Llama-2 chat format: every user/assistant pair is
// "<s>[INST] {user} [/INST] {assistant} </s>", the first user message prefixed by
// "<<SYS>>\n{system}\n<</SYS>>\n\n" when there is a system prompt. The prompt is one text segment
// and the reply another, so sentencepiece's dummy prefix on the reply stands for the space after
// "[/INST]": on models that split pieces at whitespace this equals Meta's encoding of the pair.
#include <cstddef>
#include <string>

#include "template_rendering.hpp"

namespace odbatch {

void render_llama2(const Conversation& conversation, const TemplateSettings& settings,
                   TokenSequenceBuilder& builder) {
  const auto& messages = conversation.messages;
  std::size_t index = 0;
  const std::string* system_prompt = nullptr;
  bool system_from_conversation = false;
  if (!messages.empty() && messages.front().role == Role::system) {
    system_prompt = &messages.front().content;
    system_from_conversation = true;
    index = 1;
  } else if (settings.default_system_prompt) {
    system_prompt = &*settings.default_system_prompt;
  }
  if (index == messages.size()) {
    builder.begin_message(0);
    builder.fail(TokenizeErrorReason::unsupported_roles,
                 builder.location() + ": llama2 needs a user message after the system message");
    return;
  }

  for (bool first_pair = true; index < messages.size() && !builder.failed(); first_pair = false) {
    builder.begin_message(index);
    if (messages[index].role != Role::user) {
      builder.fail(TokenizeErrorReason::unsupported_roles,
                   builder.location() +
                       ": llama2 expects a user message here (an optional system message "
                       "first, then user and assistant alternating)");
      return;
    }
    if (settings.add_bos) builder.token(settings.tokens.bos, false);
    if (first_pair && system_prompt) {
      if (system_from_conversation)
        builder.begin_message(0);
      else
        builder.begin_default_system_prompt();
      builder.text("[INST] <<SYS>>\n", false);
      if (system_from_conversation)
        builder.content(*system_prompt, false);
      else
        builder.text(*system_prompt, false);
      builder.begin_message(index);
      builder.text("\n<</SYS>>\n\n", false);
    } else {
      builder.text("[INST] ", false);
    }
    builder.content(messages[index].content, false);
    builder.text(" [/INST]", false);
    if (++index == messages.size()) return;  // a last question without a reply stays a prompt

    builder.begin_message(index);
    if (messages[index].role != Role::assistant) {
      builder.fail(TokenizeErrorReason::unsupported_roles,
                   builder.location() + ": llama2 expects the assistant's reply here");
      return;
    }
    builder.content(messages[index].content, true);
    builder.text(" ", true);
    builder.token(settings.tokens.eos, true);
    ++index;
  }
}

}  // namespace odbatch
