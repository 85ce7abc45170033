#pragma once
// Hugging Face tokenizer.json files with a byte-level BPE model (Qwen2/2.5/3, Llama-3,
// Mistral-Nemo, GPT-2). docs/text-tokenizers.md lists the supported normalizers, pre-tokenizers,
// post-processors and decoders; any other feature is refused when loading, never approximated.
#include <filesystem>
#include <memory>
#include <string_view>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch {

// Throws TokenizerModelError (odbatch/text/chat_tokenizer.hpp) naming the file, the JSON path
// ("pre_tokenizer.pretokenizers[0].behavior") and the problem or unsupported feature.
std::unique_ptr<TextTokenizer> load_hf_tokenizer(const std::filesystem::path& tokenizer_json);
// The same from the file's text; `origin` names it in errors.
std::unique_ptr<TextTokenizer> parse_hf_tokenizer(std::string_view json,
                                                  const std::filesystem::path& origin);

}  // namespace odbatch
