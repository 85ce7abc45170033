#include "odbatch/text/tiktoken_presets.hpp"

#include <string>

#include "odbatch/core/config.hpp"

namespace odbatch {
namespace {

constexpr std::string_view kPresets[] = {"cl100k_base", "o200k_base", "llama3"};

TiktokenOptions llama3_options() {
  constexpr TokenId kFirstSpecial = 128000;
  constexpr TokenId kSpecialCount = 256;
  constexpr std::string_view kNamed[] = {"<|begin_of_text|>",
                                         "<|end_of_text|>",
                                         "<|reserved_special_token_0|>",
                                         "<|reserved_special_token_1|>",
                                         "<|finetune_right_pad_id|>",
                                         "<|step_id|>",
                                         "<|start_header_id|>",
                                         "<|end_header_id|>",
                                         "<|eom_id|>",
                                         "<|eot_id|>",
                                         "<|python_tag|>"};
  TiktokenOptions options;
  options.pattern = std::string(tiktoken_pattern_preset("llama3"));
  TokenId id = kFirstSpecial;
  for (const std::string_view name : kNamed) options.special_tokens.emplace_back(name, id++);
  for (int reserved = 2; id < kFirstSpecial + kSpecialCount; ++reserved)
    options.special_tokens.emplace_back(
        "<|reserved_special_token_" + std::to_string(reserved) + "|>", id++);
  return options;
}

}  // namespace

bool is_tiktoken_preset(std::string_view name) {
  for (const std::string_view preset : kPresets)
    if (preset == name) return true;
  return false;
}

TiktokenOptions tiktoken_preset_options(std::string_view name) {
  if (name == "llama3") return llama3_options();
  TiktokenOptions options;
  options.pattern = std::string(tiktoken_pattern_preset(name));
  if (name == "cl100k_base") {
    options.special_tokens = {{"<|endoftext|>", 100257},
                              {"<|fim_prefix|>", 100258},
                              {"<|fim_middle|>", 100259},
                              {"<|fim_suffix|>", 100260},
                              {"<|endofprompt|>", 100276}};
  } else if (name == "o200k_base") {
    options.special_tokens = {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}};
  }
  return options;
}

}  // namespace odbatch
