// Trains the small sentencepiece models the tokenizer tests load (a CTest fixture): models of
// 1000 pieces on the GPL-3 text (unigram unless said otherwise), well under a second each.
// Usage: odbatch_test_spm_model OUTPUT_DIR
#include <sentencepiece_trainer.h>

#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <unordered_map>

#include "tokenizer_test_models.hpp"

namespace {

using Arguments = std::unordered_map<std::string, std::string>;

constexpr const char* kChatPieces =
    "<|im_start|>,<|im_end|>,<|vision_start|>,<|vision_end|>,<|image_pad|>";

bool train(const std::filesystem::path& directory, std::string_view name, Arguments arguments) {
  // insert() keeps a model's own entries, such as its model_type.
  arguments.insert({
      {"input", "/usr/share/common-licenses/GPL-3"},
      {"model_prefix", (directory / std::string(name)).string()},
      {"vocab_size", "1000"},
      {"model_type", "unigram"},
      {"num_threads", "1"},
      {"minloglevel", "2"},
  });
  const auto status = sentencepiece::SentencePieceTrainer::Train(arguments);
  if (status.ok()) return true;
  std::cerr << "training " << name << " failed: " << status.ToString() << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: odbatch_test_spm_model OUTPUT_DIR\n";
    return 2;
  }
  try {
    const std::filesystem::path directory = argv[1];
    std::filesystem::create_directories(directory);
    using namespace odbatch::test;
    const bool ok =
        train(directory, kChatModel, {{"user_defined_symbols", kChatPieces}}) &&
        // Llama-2's normalization: text kept as is (newlines included) through byte pieces.
        train(directory, kByteChatModel,
              {{"user_defined_symbols", kChatPieces},
               {"normalization_rule_name", "identity"},
               {"remove_extra_whitespaces", "false"},
               {"byte_fallback", "true"}}) &&
        train(directory, kPlainModel, {}) &&
        train(directory, kBpeChatModel,
              {{"user_defined_symbols", kChatPieces},
               {"model_type", "bpe"},
               {"normalization_rule_name", "identity"},
               {"remove_extra_whitespaces", "false"},
               {"allow_whitespace_only_pieces", "true"},
               {"byte_fallback", "true"}}) &&
        train(directory, kUnsplitChatModel,
              {{"user_defined_symbols", kChatPieces}, {"split_by_whitespace", "false"}}) &&
        train(directory, kSuffixChatModel,
              {{"user_defined_symbols", kChatPieces}, {"treat_whitespace_as_suffix", "true"}});
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "odbatch_test_spm_model: " << e.what() << "\n";
    return 1;
  }
}
