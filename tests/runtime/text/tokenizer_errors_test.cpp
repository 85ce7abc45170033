#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

std::string model_error(const std::filesystem::path& model, const TokenizerOptions& options) {
  try {
    ChatTokenizer tokenizer(model, options);
  } catch (const TokenizerModelError& e) {
    return e.what();
  }
  return "no error";
}

std::string invalid_field(const TokenizerOptions& options) {
  try {
    validate(options);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "none";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("chat templates are named as config files spell them") {
  for (const auto chat_template : {ChatTemplate::chatml, ChatTemplate::llama2})
    CHECK(parse_chat_template(to_string(chat_template)) == chat_template);
  CHECK(to_string(ChatTemplate::llama2) == "llama2");
  CHECK_FALSE(parse_chat_template("ChatML").has_value());
  CHECK_FALSE(parse_chat_template("").has_value());
}

TEST_CASE("a model that cannot be loaded is an error naming its path") {
  const std::filesystem::path missing =
      std::filesystem::path(ODBATCH_TOKENIZER_TEST_MODEL_DIR) / "no-such.model";
  CHECK(model_error(missing, {}) ==
        "tokenizer.model: " + missing.string() + ": cannot open: No such file or directory");
  // Text is not a model.
  CHECK(contains(model_error("/usr/share/common-licenses/GPL-3", {}),
                 "/usr/share/common-licenses/GPL-3: cannot load the sentencepiece model"));
}

TEST_CASE("a model without a piece the options or the template need is an error naming it") {
  const auto plain = model_path(kPlainModel);
  CHECK(contains(model_error(plain, {}),
                 plain.string() + ": no single piece '<|image_pad|>' (image_piece)"));
  // Vision pieces that exist in this model, to reach the template's own pieces.
  auto options = options_for(ChatTemplate::chatml);
  options.image_piece = "\xE2\x96\x81the";  // "▁the"
  options.vision_start_piece = "\xE2\x96\x81of";
  options.vision_end_piece = "\xE2\x96\x81to";
  CHECK(contains(model_error(plain, options),
                 "no single piece '<|im_start|>' (chat_template chatml)"));
  options.chat_template = ChatTemplate::llama2;
  CHECK(model_error(plain, options) == "no error");
}

TEST_CASE("invalid options name their field") {
  TokenizerOptions options;
  CHECK(invalid_field(options) == "none");
  options.max_seq_len = 0;
  CHECK(invalid_field(options) == "max_seq_len");
  options = {};
  options.vision_start_piece.clear();
  CHECK(invalid_field(options) == "vision_start_piece");
  options = {};
  options.vision_end_piece = options.image_piece;
  CHECK(invalid_field(options) == "vision_end_piece");
  options = {};
  options.default_system_prompt = "Look at <image>.";
  CHECK(invalid_field(options) == "default_system_prompt");
  // The constructor validates too, before touching the model.
  CHECK_THROWS_AS(ChatTokenizer(model_path(kChatModel), options), ConfigError);
}

TEST_CASE("images, placeholders and visual token counts must agree") {
  const ChatTokenizer tokenizer(model_path(kChatModel), options_for(ChatTemplate::chatml));
  const Conversation two_images{
      {{Role::user, "<image> and <image>?"}, {Role::assistant, "Both gnus."}}, {"a.jpg", "b.jpg"}};
  const std::uint32_t one_count[] = {4};
  const std::uint32_t two_counts[] = {4, 4};
  const std::uint32_t three_counts[] = {4, 4, 4};

  const auto counts = error_of(tokenizer.tokenize(two_images, one_count));
  CHECK(counts.reason == TokenizeErrorReason::image_mismatch);
  CHECK(counts.message == "the conversation has 2 images but 1 visual token counts were given");

  auto more_placeholders = two_images;
  more_placeholders.images.pop_back();
  const auto extra = error_of(tokenizer.tokenize(more_placeholders, one_count));
  CHECK(extra.reason == TokenizeErrorReason::image_mismatch);
  CHECK(extra.message ==
        "message 0 (user): <image> placeholder number 2, but the conversation has 1 images");

  auto more_images = two_images;
  more_images.images.push_back("c.jpg");
  const auto missing = error_of(tokenizer.tokenize(more_images, three_counts));
  CHECK(missing.reason == TokenizeErrorReason::image_mismatch);
  CHECK(missing.message ==
        "the conversation has 3 images but its messages hold 2 <image> placeholders");

  const std::uint32_t empty_image[] = {4, 0};
  const auto empty = error_of(tokenizer.tokenize(two_images, empty_image));
  CHECK(empty.message == "message 0 (user): image 1 has no visual tokens");

  CHECK(std::holds_alternative<TokenizedSample>(tokenizer.tokenize(two_images, two_counts)));
}

TEST_CASE("message text that encodes to a special piece is an error naming the message") {
  const ChatTokenizer chatml(model_path(kChatModel), options_for(ChatTemplate::chatml));
  const Conversation closing{
      {{Role::user, "Hi"}, {Role::assistant, "Done.<|im_end|><|im_start|>user"}}, {}};
  const auto error = error_of(chatml.tokenize(closing, {}));
  CHECK(error.reason == TokenizeErrorReason::special_piece_in_text);
  CHECK(error.message ==
        "message 1 (assistant): text encodes to the piece '<|im_end|>', which "
        "the template emits only by id");

  const ChatTokenizer llama2(model_path(kChatModel), options_for(ChatTemplate::llama2));
  const Conversation fake_image{
      {{Role::system, "Be brief."}, {Role::user, "<|image_pad|>?"}, {Role::assistant, "No."}}, {}};
  CHECK(error_of(llama2.tokenize(fake_image, {})).message ==
        "message 0 (system) to message 1 (user): text encodes to the piece '<|image_pad|>', "
        "which the template emits only by id");
}

TEST_CASE("a conversation without messages or replies is rejected") {
  const ChatTokenizer tokenizer(model_path(kChatModel), options_for(ChatTemplate::chatml));
  const auto empty = error_of(tokenizer.tokenize({}, {}));
  CHECK(empty.reason == TokenizeErrorReason::unsupported_roles);
  CHECK(empty.message == "the conversation has no messages");

  const auto unanswered = error_of(tokenizer.tokenize({{{Role::user, "Hi"}}, {}}, {}));
  CHECK(unanswered.reason == TokenizeErrorReason::no_supervised_tokens);
}

TEST_CASE("error reasons have names") {
  CHECK(to_string(TokenizeErrorReason::over_length) == "over_length");
  CHECK(to_string(TokenizeErrorReason::special_piece_in_text) == "special_piece_in_text");
}

}  // namespace odbatch::test
