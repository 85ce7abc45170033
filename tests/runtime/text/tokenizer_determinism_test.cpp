#include <doctest/doctest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

const Conversation kConversation{
    {{Role::system, "Answer from the license text."},
     {Role::user, "<image> What may I do with the Program?"},
     {Role::assistant, "You may convey verbatim copies of the Program's source code."},
     {Role::user, "And modified versions?"},
     {Role::assistant, "Yes, under the terms of section 5."}},
    {"license.jpg"}};
const std::uint32_t kVisualTokens[] = {16};

}  // namespace

TEST_CASE("tokenizing is a function of the model, the options and the conversation") {
  for (const auto chat_template : {ChatTemplate::chatml, ChatTemplate::llama2}) {
    CAPTURE(to_string(chat_template));
    const ChatTokenizer first(model_path(kChatModel), options_for(chat_template));
    const ChatTokenizer second(model_path(kChatModel), options_for(chat_template));
    const auto expected = sample_of(first.tokenize(kConversation, kVisualTokens));
    CHECK(sample_of(first.tokenize(kConversation, kVisualTokens)) == expected);
    CHECK(sample_of(second.tokenize(kConversation, kVisualTokens)) == expected);
  }
}

TEST_CASE("threads may share one tokenizer") {
  const ChatTokenizer tokenizer(model_path(kChatModel), options_for(ChatTemplate::chatml));
  const auto expected = sample_of(tokenizer.tokenize(kConversation, kVisualTokens));
  constexpr int kThreads = 4;
  constexpr int kRepetitions = 200;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRepetitions; ++i) {
        const auto result = tokenizer.tokenize(kConversation, kVisualTokens);
        const auto* sample = std::get_if<TokenizedSample>(&result);
        if (!sample || !(*sample == expected)) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(kThreads, 0));
}

}  // namespace odbatch::test
