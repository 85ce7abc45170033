#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

const Conversation kImageQuestion{{{Role::system, "Be brief."},
                                   {Role::user, "<image>\nWhat is free software?"},
                                   {Role::assistant, "Software that respects freedom."}},
                                  {"gnu.jpg"}};
const std::uint32_t kFourVisualTokens[] = {4};

}  // namespace

TEST_CASE("chatml lays out every message between <|im_start|> and <|im_end|>") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::chatml));
  const auto result = tokenizer.tokenize(kImageQuestion, kFourVisualTokens);
  const auto sample = sample_of(result);

  // Every text segment starts with sentencepiece's dummy prefix, rendered here as a space.
  CHECK(render(*processor, sample.input_ids) ==
        "<|im_start|> system\n Be brief.<|im_end|> \n"
        "<|im_start|> user\n"
        "<|vision_start|><|image_pad|><|image_pad|><|image_pad|><|image_pad|><|vision_end|>"
        " \nWhat is free software?<|im_end|> \n"
        "<|im_start|> assistant\n Software that respects freedom.<|im_end|> \n");
  CHECK_FALSE(sample.truncated);
}

TEST_CASE("chatml supervises the assistant's content and its <|im_end|>, nothing else") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::chatml));
  const auto sample = sample_of(tokenizer.tokenize(kImageQuestion, kFourVisualTokens));

  REQUIRE(sample.labels.size() == sample.input_ids.size());
  std::uint32_t supervised = 0;
  for (std::size_t i = 0; i < sample.labels.size(); ++i) {
    if (sample.labels[i] == kIgnoreLabel) continue;
    CHECK(sample.labels[i] == sample.input_ids[i]);
    ++supervised;
  }
  CHECK(supervised_runs(*processor, sample) ==
        std::vector<std::string>{" Software that respects freedom.<|im_end|>"});
  CHECK(sample.supervised_targets == supervised);
  // The turn's end is learned, the separator after it is not.
  CHECK(sample.labels[sample.labels.size() - 3] == processor->PieceToId("<|im_end|>"));
}

TEST_CASE("chatml wraps each image's visual tokens and reports where they are") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::chatml));
  const Conversation conversation{
      {{Role::user, "Compare <image> with <image>."}, {Role::assistant, "The first is larger."}},
      {"a.jpg", "b.jpg"}};
  const std::uint32_t visual_tokens[] = {3, 7};
  const auto sample = sample_of(tokenizer.tokenize(conversation, visual_tokens));

  REQUIRE(sample.image_spans.size() == 2);
  const int image = processor->PieceToId("<|image_pad|>");
  for (std::size_t i = 0; i < 2; ++i) {
    const auto [offset, length] = sample.image_spans[i];
    CHECK(length == visual_tokens[i]);
    CHECK(sample.input_ids[offset - 1] == processor->PieceToId("<|vision_start|>"));
    CHECK(sample.input_ids[offset + length] == processor->PieceToId("<|vision_end|>"));
    for (std::uint32_t k = 0; k < length; ++k) {
      CHECK(sample.input_ids[offset + k] == image);
      CHECK(sample.labels[offset + k] == kIgnoreLabel);
    }
  }
  CHECK(sample.image_spans[0].offset + 3 + 1 < sample.image_spans[1].offset);
  std::size_t image_tokens = 0;
  for (const auto id : sample.input_ids) image_tokens += id == image ? 1 : 0;
  CHECK(image_tokens == 10);
}

TEST_CASE("chatml supervises every assistant turn of a multi-turn conversation") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::chatml));
  const Conversation conversation{{{Role::user, "Who wrote the GPL?"},
                                   {Role::assistant, "Richard Stallman."},
                                   {Role::user, "When?"},
                                   {Role::assistant, "In 1989."}},
                                  {}};
  const auto sample = sample_of(tokenizer.tokenize(conversation, {}));
  CHECK(supervised_runs(*processor, sample) ==
        std::vector<std::string>{" Richard Stallman.<|im_end|>", " In 1989.<|im_end|>"});
}

TEST_CASE("chatml with the default normalizer drops the template's newlines") {
  // nmt_nfkc turns "\n" into a space and drops extra whitespace, so "user\n" encodes as " user"
  // and the separator after <|im_end|> encodes to nothing.
  const auto processor = load_processor(kChatModel);
  const ChatTokenizer tokenizer(model_path(kChatModel), options_for(ChatTemplate::chatml));
  const Conversation conversation{{{Role::user, "Hi"}, {Role::assistant, "Hello."}}, {}};
  const auto sample = sample_of(tokenizer.tokenize(conversation, {}));
  CHECK(render(*processor, sample.input_ids) ==
        "<|im_start|> user Hi<|im_end|><|im_start|> assistant Hello.<|im_end|>");
  CHECK(supervised_runs(*processor, sample) == std::vector<std::string>{" Hello.<|im_end|>"});
}

TEST_CASE("chatml adds the default system prompt only when the conversation has none") {
  const auto processor = load_processor(kByteChatModel);
  auto options = options_for(ChatTemplate::chatml);
  options.default_system_prompt = "You are helpful.";
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);

  const Conversation without{{{Role::user, "Hi"}, {Role::assistant, "Hello."}}, {}};
  CHECK(render(*processor, sample_of(tokenizer.tokenize(without, {})).input_ids) ==
        "<|im_start|> system\n You are helpful.<|im_end|> \n"
        "<|im_start|> user\n Hi<|im_end|> \n"
        "<|im_start|> assistant\n Hello.<|im_end|> \n");

  const Conversation with{{{Role::system, "Be brief."}, {Role::user, "Hi"}}, {}};
  auto keep_unsupervised = options;
  keep_unsupervised.zero_labels = ZeroLabelPolicy::keep;
  const ChatTokenizer keeping(model_path(kByteChatModel), keep_unsupervised);
  CHECK(render(*processor, sample_of(keeping.tokenize(with, {})).input_ids) ==
        "<|im_start|> system\n Be brief.<|im_end|> \n<|im_start|> user\n Hi<|im_end|> \n");
}

TEST_CASE("chatml starts with BOS only when add_bos asks for it") {
  const auto processor = load_processor(kByteChatModel);
  const Conversation conversation{{{Role::user, "Hi"}, {Role::assistant, "Hello."}}, {}};
  auto options = options_for(ChatTemplate::chatml);
  const ChatTokenizer without(model_path(kByteChatModel), options);
  CHECK(sample_of(without.tokenize(conversation, {})).input_ids.front() ==
        processor->PieceToId("<|im_start|>"));
  options.add_bos = true;
  const ChatTokenizer with(model_path(kByteChatModel), options);
  const auto sample = sample_of(with.tokenize(conversation, {}));
  CHECK(sample.input_ids.front() == processor->bos_id());
  CHECK(sample.input_ids[1] == processor->PieceToId("<|im_start|>"));
}

}  // namespace odbatch::test
