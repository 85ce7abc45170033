#pragma once
// What the tokenizer tests share: the trained models, and a readable view of token sequences.
#include <doctest/doctest.h>
#include <sentencepiece_processor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_models.hpp"

namespace odbatch::test {

inline std::filesystem::path model_path(std::string_view name) {
  const auto path =
      std::filesystem::path(ODBATCH_TOKENIZER_TEST_MODEL_DIR) / (std::string(name) + ".model");
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing " << path.string()
                                                            << ": ctest trains it first with the "
                                                               "odbatch_test_spm_model fixture");
  return path;
}

// The model itself, to look pieces up independently of the tokenizer.
inline std::unique_ptr<sentencepiece::SentencePieceProcessor> load_processor(
    std::string_view name) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  REQUIRE(processor->Load(model_path(name).string()).ok());
  return processor;
}

// The pieces as text: "▁" as a space, byte pieces as their byte, every other piece (special
// pieces, <s>, </s>) as written. Unlike Decode, it hides nothing, not even a leading space.
inline std::string render(const sentencepiece::SentencePieceProcessor& processor,
                          std::span<const std::int32_t> ids) {
  std::string text;
  for (const auto id : ids) {
    const std::string& piece = processor.IdToPiece(id);
    if (processor.IsByte(id)) {  // "<0xHH>"
      text += static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16));
      continue;
    }
    for (std::size_t at = 0; at < piece.size();) {
      if (piece.compare(at, 3, "\xE2\x96\x81") == 0) {  // U+2581, sentencepiece's space
        text += ' ';
        at += 3;
      } else {
        text += piece[at++];
      }
    }
  }
  return text;
}

// Each run of consecutive supervised positions, rendered.
inline std::vector<std::string> supervised_runs(
    const sentencepiece::SentencePieceProcessor& processor, const TokenizedSample& sample) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < sample.labels.size();) {
    if (sample.labels[i] == kIgnoreLabel) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < sample.labels.size() && sample.labels[i] != kIgnoreLabel) ++i;
    runs.push_back(render(processor, std::span(sample.labels).subspan(start, i - start)));
  }
  return runs;
}

// By value: results are usually temporaries.
inline TokenizedSample sample_of(const TokenizeResult& result) {
  if (const auto* error = std::get_if<TokenizeError>(&result))
    FAIL("unexpected " << to_string(error->reason) << ": " << error->message);
  return std::get<TokenizedSample>(result);
}

inline TokenizeError error_of(const TokenizeResult& result) {
  REQUIRE_MESSAGE(std::holds_alternative<TokenizeError>(result), "expected an error");
  return std::get<TokenizeError>(result);
}

inline TokenizerOptions options_for(ChatTemplate chat_template) {
  TokenizerOptions options;
  options.chat_template = chat_template;
  return options;
}

}  // namespace odbatch::test
