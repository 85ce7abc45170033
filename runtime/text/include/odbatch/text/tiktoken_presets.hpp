#pragma once
// The split pattern and special tokens that go with a tiktoken ranks file of a known model family:
// OpenAI's cl100k_base and o200k_base, and Llama-3's original tokenizer.model.
#include <string_view>

#include "odbatch/text/tiktoken_tokenizer.hpp"

namespace odbatch {

bool is_tiktoken_preset(std::string_view name);

// cl100k_base: <|endoftext|> 100257, <|fim_prefix|> 100258, <|fim_middle|> 100259,
// <|fim_suffix|> 100260, <|endofprompt|> 100276; o200k_base: <|endoftext|> 199999,
// <|endofprompt|> 200018; llama3: Llama-3.1's 256 special tokens from 128000 (<|begin_of_text|>,
// <|end_of_text|>, ..., <|start_header_id|> 128006, <|end_header_id|> 128007, <|eot_id|> 128009,
// <|python_tag|> 128010, then <|reserved_special_token_N|>). Throws ConfigError (field
// "tiktoken_preset") for other names.
TiktokenOptions tiktoken_preset_options(std::string_view name);

}  // namespace odbatch
