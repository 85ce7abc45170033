#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

const Conversation kImageQuestion{
    {{Role::user, "What does this show? <image>"},
     {Role::assistant, "A gnu, the mascot of the GNU project, drawn in ink."}},
    {"gnu.jpg"}};
const std::uint32_t kSixVisualTokens[] = {6};

TokenizedSample full_sample() {
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options_for(ChatTemplate::chatml));
  return sample_of(tokenizer.tokenize(kImageQuestion, kSixVisualTokens));
}

TokenizeResult tokenize_within(std::uint32_t max_seq_len, OverLengthPolicy policy,
                               ZeroLabelPolicy zero_labels = ZeroLabelPolicy::reject) {
  auto options = options_for(ChatTemplate::chatml);
  options.max_seq_len = max_seq_len;
  options.over_length = policy;
  options.zero_labels = zero_labels;
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);
  return tokenizer.tokenize(kImageQuestion, kSixVisualTokens);
}

std::size_t first_supervised(const TokenizedSample& sample) {
  return static_cast<std::size_t>(
      std::find_if(sample.labels.begin(), sample.labels.end(),
                   [](std::int32_t label) { return label != kIgnoreLabel; }) -
      sample.labels.begin());
}

}  // namespace

TEST_CASE("a sample of exactly max_seq_len tokens is kept whole") {
  const auto full = full_sample();
  const auto size = static_cast<std::uint32_t>(full.input_ids.size());
  for (const auto policy : {OverLengthPolicy::truncate, OverLengthPolicy::reject})
    CHECK(sample_of(tokenize_within(size, policy)) == full);
}

TEST_CASE("truncate keeps the first max_seq_len tokens and counts the targets left") {
  const auto full = full_sample();
  const auto max_seq_len = static_cast<std::uint32_t>(first_supervised(full) + 5);
  const auto sample = sample_of(tokenize_within(max_seq_len, OverLengthPolicy::truncate));
  CHECK(sample.truncated);
  CHECK(sample.input_ids ==
        std::vector<std::int32_t>(full.input_ids.begin(), full.input_ids.begin() + max_seq_len));
  CHECK(sample.labels ==
        std::vector<std::int32_t>(full.labels.begin(), full.labels.begin() + max_seq_len));
  CHECK(sample.supervised_targets == 5);
  CHECK(sample.image_spans == full.image_spans);
}

TEST_CASE("reject refuses a sample over max_seq_len") {
  const auto full = full_sample();
  const auto size = static_cast<std::uint32_t>(full.input_ids.size());
  const auto error = error_of(tokenize_within(size - 1, OverLengthPolicy::reject));
  CHECK(error.reason == TokenizeErrorReason::over_length);
  // Encoding stops past max_seq_len, so the full length is not known.
  CHECK(error.message == "more than max_seq_len " + std::to_string(size - 1) +
                             " tokens, 6 of them visual tokens of its 1 image(s) (raise "
                             "batching.max_seq_len, or set batching.over_length = \"truncate\")");
}

TEST_CASE("a truncation that leaves no supervised token rejects the sample unless kept") {
  const auto full = full_sample();
  const auto max_seq_len = static_cast<std::uint32_t>(first_supervised(full));
  const auto error = error_of(tokenize_within(max_seq_len, OverLengthPolicy::truncate));
  CHECK(error.reason == TokenizeErrorReason::no_supervised_tokens);
  CHECK(error.message.find("after truncation") != std::string::npos);

  const auto kept =
      sample_of(tokenize_within(max_seq_len, OverLengthPolicy::truncate, ZeroLabelPolicy::keep));
  CHECK(kept.truncated);
  CHECK(kept.supervised_targets == 0);
}

TEST_CASE("a truncation never cuts through or drops an image") {
  const auto full = full_sample();
  REQUIRE(full.image_spans.size() == 1);
  const auto [offset, length] = full.image_spans[0];
  // Inside the block (its vision end token included), and before the block's start.
  for (const std::uint32_t max_seq_len : {offset + 2, offset + length, offset - 1, offset - 3}) {
    CAPTURE(max_seq_len);
    const auto error = error_of(tokenize_within(max_seq_len, OverLengthPolicy::truncate));
    CHECK(error.reason == TokenizeErrorReason::over_length);
    CHECK(error.message.find("image 0 (6 visual tokens)") != std::string::npos);
    CHECK(error.message.find("(lower images.max_pixels, or raise batching.max_seq_len)") !=
          std::string::npos);
  }
  // A cut after the image only drops text.
  const auto after_image = static_cast<std::uint32_t>(first_supervised(full) + 2);
  REQUIRE(after_image > offset + length + 1);
  const auto sample = sample_of(tokenize_within(after_image, OverLengthPolicy::truncate));
  CHECK(sample.truncated);
  CHECK(sample.image_spans == full.image_spans);
}

}  // namespace odbatch::test
