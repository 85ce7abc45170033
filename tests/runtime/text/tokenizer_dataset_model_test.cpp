// A smoke test of the tokenizer model the dataset scripts train, when it has been produced.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>

#include "odbatch/text/chat_tokenizer.hpp"
#include "test_skip.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

const Conversation kConversation{{{Role::user, "<image> What does the picture show?"},
                                  {Role::assistant, "A gnu standing in a field."}},
                                 {"gnu.jpg"}};
const std::uint32_t kVisualTokens[] = {16};

}  // namespace

TEST_CASE("the dataset's tokenizer model serves both templates") {
  const std::filesystem::path model = ODBATCH_DATASET_TOKENIZER_MODEL;
  if (!std::filesystem::exists(model)) {
    ODBATCH_SKIP_TEST("dataset", model.string() << " is absent (tools/dataset produces it)");
  }
  for (const auto chat_template : {ChatTemplate::chatml, ChatTemplate::llama2}) {
    CAPTURE(to_string(chat_template));
    const ChatTokenizer tokenizer(model, options_for(chat_template));
    const auto sample = sample_of(tokenizer.tokenize(kConversation, kVisualTokens));
    CHECK(sample.labels.size() == sample.input_ids.size());
    CHECK(sample.supervised_targets > 0);
    REQUIRE(sample.image_spans.size() == 1);
    CHECK(sample.image_spans[0].length == 16);
    CHECK_FALSE(sample.truncated);
  }
}

}  // namespace odbatch::test
