#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

const Conversation kTwoPairs{{{Role::system, "Be brief."},
                              {Role::user, "What is copyleft?"},
                              {Role::assistant, "A licensing method."},
                              {Role::user, "And the GPL?"},
                              {Role::assistant, "A copyleft license."}},
                             {}};

}  // namespace

TEST_CASE("llama2 wraps every user/assistant pair in <s>[INST] ... [/INST] ... </s>") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::llama2));
  const auto sample = sample_of(tokenizer.tokenize(kTwoPairs, {}));
  CHECK(render(*processor, sample.input_ids) ==
        "<s> [INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nWhat is copyleft? [/INST] A licensing method. "
        "</s><s> [INST] And the GPL? [/INST] A copyleft license. </s>");
  CHECK(sample.input_ids.front() == processor->bos_id());
  CHECK(sample.input_ids.back() == processor->eos_id());
}

TEST_CASE("llama2 encodes a pair exactly as Meta's reference encodes the whole turn") {
  // Meta: encode(f"[INST] {user} [/INST] {answer} ") between BOS and EOS, one call per pair.
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::llama2));
  std::vector<int> expected;
  for (const std::string turn :
       {"[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nWhat is copyleft? [/INST] A licensing method. ",
        "[INST] And the GPL? [/INST] A copyleft license. "}) {
    expected.push_back(processor->bos_id());
    const auto ids = processor->EncodeAsIds(turn);
    expected.insert(expected.end(), ids.begin(), ids.end());
    expected.push_back(processor->eos_id());
  }
  CHECK(sample_of(tokenizer.tokenize(kTwoPairs, {})).input_ids == expected);
}

TEST_CASE("llama2 supervises each reply and its </s>") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::llama2));
  const auto sample = sample_of(tokenizer.tokenize(kTwoPairs, {}));
  CHECK(supervised_runs(*processor, sample) ==
        std::vector<std::string>{" A licensing method. </s>", " A copyleft license. </s>"});
  std::uint32_t supervised = 0;
  for (std::size_t i = 1; i < sample.labels.size(); ++i)
    supervised += sample.labels[i] != kIgnoreLabel ? 1 : 0;
  CHECK(sample.supervised_targets == supervised);
}

TEST_CASE("llama2 puts images inside the prompt and the default system prompt in <<SYS>>") {
  const auto processor = load_processor(kByteChatModel);
  auto options = options_for(ChatTemplate::llama2);
  options.default_system_prompt = "Describe images.";
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);
  const Conversation conversation{
      {{Role::user, "<image>What is this?"}, {Role::assistant, "A gnu."}}, {"gnu.jpg"}};
  const std::uint32_t visual_tokens[] = {2};
  const auto sample = sample_of(tokenizer.tokenize(conversation, visual_tokens));
  CHECK(render(*processor, sample.input_ids) ==
        "<s> [INST] <<SYS>>\nDescribe images.\n<</SYS>>\n\n"
        "<|vision_start|><|image_pad|><|image_pad|><|vision_end|> What is this? [/INST] A gnu. "
        "</s>");
  REQUIRE(sample.image_spans.size() == 1);
  CHECK(sample.image_spans[0].length == 2);
}

TEST_CASE("llama2 leaves out <s> when add_bos is off and keeps a last question unanswered") {
  const auto processor = load_processor(kByteChatModel);
  auto options = options_for(ChatTemplate::llama2);
  options.add_bos = false;
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);
  const Conversation conversation{
      {{Role::user, "Hi"}, {Role::assistant, "Hello."}, {Role::user, "Bye"}}, {}};
  const auto sample = sample_of(tokenizer.tokenize(conversation, {}));
  CHECK(render(*processor, sample.input_ids) ==
        " [INST] Hi [/INST] Hello. </s> [INST] Bye [/INST]");
  CHECK(supervised_runs(*processor, sample) == std::vector<std::string>{" Hello. </s>"});
}

TEST_CASE("llama2 rejects role orders it cannot express") {
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::llama2));
  const auto reason_of = [&](const Conversation& conversation) {
    return error_of(tokenizer.tokenize(conversation, {}));
  };
  const auto assistant_first = reason_of({{{Role::assistant, "Hello."}}, {}});
  CHECK(assistant_first.reason == TokenizeErrorReason::unsupported_roles);
  CHECK(assistant_first.message.find("message 0 (assistant)") != std::string::npos);

  const auto two_users =
      reason_of({{{Role::user, "Hi"}, {Role::user, "Hi again"}, {Role::assistant, "Hello."}}, {}});
  CHECK(two_users.reason == TokenizeErrorReason::unsupported_roles);
  CHECK(two_users.message.find("message 1 (user)") != std::string::npos);

  const auto late_system = reason_of(
      {{{Role::user, "Hi"}, {Role::assistant, "Hello."}, {Role::system, "Be brief."}}, {}});
  CHECK(late_system.message.find("message 2 (system)") != std::string::npos);

  const auto system_only = reason_of({{{Role::system, "Be brief."}}, {}});
  CHECK(system_only.reason == TokenizeErrorReason::unsupported_roles);
  CHECK(system_only.message.find("needs a user message") != std::string::npos);
}

}  // namespace odbatch::test
