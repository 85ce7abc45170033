#pragma once
// The chat templates a conversation can be rendered with, by the names config files use.
#include <cstdint>
#include <optional>
#include <string_view>

namespace odbatch {

// chatml: Qwen2-VL's "<|im_start|>role\n...<|im_end|>\n" turns; llama2: Meta's
// "<s>[INST] ... [/INST] ... </s>" pairs. docs/tokenization.md spells both out exactly.
// jinja: the model's own Jinja chat template (TokenizerOptions::template_file).
enum class ChatTemplate : std::uint8_t { chatml, llama2, jinja };

std::string_view to_string(ChatTemplate chat_template);

// Accepts exactly the names to_string produces; nullopt otherwise.
std::optional<ChatTemplate> parse_chat_template(std::string_view name);

}  // namespace odbatch
