#pragma once
// The chat templates, rendered into a TokenSequenceBuilder. Private to the tokenizer;
// docs/tokenization.md is their specification.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/core/conversation.hpp"
#include "token_sequence_builder.hpp"

namespace odbatch {

// What a template emits by id or encodes once per tokenizer rather than once per message.
struct TemplateTokens {
  int bos = -1;
  int eos = -1;
  int im_start = -1;  // chatml only
  int im_end = -1;    // chatml only
  // chatml: the encoded "{role}\n" header of each Role (a tool's stays empty: the presets refuse
  // tool messages before rendering), and the "\n" after <|im_end|>.
  std::array<std::vector<int>, static_cast<std::size_t>(Role::tool) + 1> role_headers;
  std::vector<int> turn_separator;
};

struct TemplateSettings {
  const TemplateTokens& tokens;
  bool add_bos = false;
  const std::optional<std::string>& default_system_prompt;
};

// Both render a conversation of at least one message; errors go to the builder.
void render_chatml(const Conversation& conversation, const TemplateSettings& settings,
                   TokenSequenceBuilder& builder);

// Fails with unsupported_roles unless the roles are: an optional system message, then user and
// assistant alternating from a user message.
void render_llama2(const Conversation& conversation, const TemplateSettings& settings,
                   TokenSequenceBuilder& builder);

}  // namespace odbatch
