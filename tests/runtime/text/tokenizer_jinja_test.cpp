// ChatTokenizer with a Jinja chat template (docs/chat-templates.md): the whole rendered text
// encoded at once, supervision found by rendering ({% generation %} blocks, or the
// rendering-diff rule), image tokens expanded to each image's visual tokens, truncation, the
// refusals, and the configuration errors. Over the small sentencepiece test models, so that the
// expected ids come from the model itself; the real templates and tokenizer.json files are
// compared with the reference libraries in chat_tokenization_oracle_test.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "odbatch/text/sentencepiece_tokenizer.hpp"
#include "source_test_files.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

constexpr std::string_view kChatml =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
// Qwen2-VL's way with images: content parts, each image written as its vision tokens.
constexpr std::string_view kChatmlParts =
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

// One directory per process: CTest runs each case as its own process, in parallel, and a file
// another process is rewriting reads as a different template.
std::filesystem::path template_file(const std::string& name, std::string_view source) {
  static const ScratchDirectory directory;
  return directory.write(name, source);
}

TokenizerOptions jinja_options(const std::string& name, std::string_view source) {
  TokenizerOptions options;
  options.chat_template = ChatTemplate::jinja;
  options.template_file = template_file(name, source);
  options.template_date = "2024-07-26";
  return options;
}

const Conversation kTwoTurns{{{Role::user, "What is free software?"},
                              {Role::assistant, "Software that respects freedom."},
                              {Role::user, "Name one."},
                              {Role::assistant, "GNU Emacs."}},
                             {}};
const Conversation kImageQuestion{
    {{Role::user, "<image>\nWhat is in the photo?"}, {Role::assistant, "A gnu."}}, {"gnu.jpg"}};
const std::uint32_t kThreeVisualTokens[] = {3};

std::vector<std::int32_t> encoded(std::string_view model, const std::string& text) {
  const auto tokenizer = load_sentencepiece_tokenizer(model_path(model));
  const auto ids = tokenizer->encode(text);
  return {ids.begin(), ids.end()};
}

}  // namespace

TEST_CASE("a Jinja template's text is encoded whole and its assistant turns are supervised") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel), jinja_options("chatml.jinja", kChatml));
  const auto sample = sample_of(tokenizer.tokenize(kTwoTurns, {}));
  const std::string text =
      "<|im_start|>user\nWhat is free software?<|im_end|>\n"
      "<|im_start|>assistant\nSoftware that respects freedom.<|im_end|>\n"
      "<|im_start|>user\nName one.<|im_end|>\n"
      "<|im_start|>assistant\nGNU Emacs.<|im_end|>\n";
  CHECK(sample.input_ids == encoded(kByteChatModel, text));
  // Each reply and its <|im_end|>; not the "\n" after it (trailing whitespace is not learned).
  const auto runs = supervised_runs(*processor, sample);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].find("Software that respects freedom.<|im_end|>") != std::string::npos);
  CHECK(runs[1].find("GNU Emacs.<|im_end|>") != std::string::npos);
  CHECK(runs[0].find("assistant") == std::string::npos);
  CHECK(runs[1].back() == '>');

  const auto rendering = tokenizer.render(kTwoTurns, {});
  const auto& rendered = std::get<SupervisedRendering>(rendering);
  CHECK(rendered.text == text);
  REQUIRE(rendered.supervised.size() == 2);
  CHECK(text.substr(rendered.supervised[1].begin,
                    rendered.supervised[1].end - rendered.supervised[1].begin) ==
        "GNU Emacs.<|im_end|>");
}

TEST_CASE("the default system prompt becomes the first message when there is none") {
  auto options = jinja_options("chatml.jinja", kChatml);
  options.default_system_prompt = "Be brief.";
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);
  const auto rendering = tokenizer.render(kTwoTurns, {});
  CHECK(std::get<SupervisedRendering>(rendering).text.starts_with(
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n"));
}

TEST_CASE("image parts become the template's vision tokens, expanded to the visual tokens") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(model_path(kByteChatModel),
                                jinja_options("parts.jinja", kChatmlParts));
  const auto sample = sample_of(tokenizer.tokenize(kImageQuestion, kThreeVisualTokens));
  REQUIRE(sample.image_spans.size() == 1);
  const ImageSpan span = sample.image_spans[0];
  CHECK(span.length == 3);
  const int image = processor->PieceToId("<|image_pad|>");
  for (std::uint32_t i = 0; i < span.length; ++i) {
    CHECK(sample.input_ids[span.offset + i] == image);
    CHECK(sample.labels[span.offset + i] == kIgnoreLabel);
  }
  CHECK(sample.input_ids[span.offset - 1] == processor->PieceToId("<|vision_start|>"));
  CHECK(sample.input_ids[span.offset + span.length] == processor->PieceToId("<|vision_end|>"));
  CHECK(supervised_runs(*processor, sample).size() == 1);

  SUBCASE("image_content text writes the vision pieces where <image> was") {
    auto options = jinja_options("chatml.jinja", kChatml);
    options.image_content = ImageContent::text;
    const ChatTokenizer as_text(model_path(kByteChatModel), options);
    CHECK(sample_of(as_text.tokenize(kImageQuestion, kThreeVisualTokens)).input_ids ==
          sample.input_ids);
  }
  SUBCASE("a template that writes no image token for an image refuses the conversation") {
    const ChatTokenizer text_only(model_path(kByteChatModel),
                                  jinja_options("chatml.jinja", kChatml));  // parts, no vision
    const auto error = error_of(text_only.tokenize(kImageQuestion, kThreeVisualTokens));
    CHECK(error.reason == TokenizeErrorReason::template_refused);  // a list rendered as text
  }
}

TEST_CASE("a cut keeps max_seq_len tokens, an image past it is over_length") {
  auto options = jinja_options("parts.jinja", kChatmlParts);
  const auto full = sample_of(ChatTokenizer(model_path(kByteChatModel), options)
                                  .tokenize(kImageQuestion, kThreeVisualTokens));
  options.max_seq_len = static_cast<std::uint32_t>(full.input_ids.size() - 2);
  const auto cut = sample_of(ChatTokenizer(model_path(kByteChatModel), options)
                                 .tokenize(kImageQuestion, kThreeVisualTokens));
  CHECK(cut.truncated);
  CHECK(cut.input_ids == std::vector(full.input_ids.begin(), full.input_ids.end() - 2));

  options.over_length = OverLengthPolicy::reject;
  CHECK(error_of(ChatTokenizer(model_path(kByteChatModel), options)
                     .tokenize(kImageQuestion, kThreeVisualTokens))
            .reason == TokenizeErrorReason::over_length);

  options.over_length = OverLengthPolicy::truncate;
  options.max_seq_len = full.image_spans[0].offset + 1;  // inside the image
  const auto error = error_of(ChatTokenizer(model_path(kByteChatModel), options)
                                  .tokenize(kImageQuestion, kThreeVisualTokens));
  CHECK(error.reason == TokenizeErrorReason::over_length);
  CHECK(error.message.find("image 0") != std::string::npos);
}

TEST_CASE("{% generation %} blocks are the supervised text when a template has them") {
  const auto processor = load_processor(kByteChatModel);
  const ChatTokenizer tokenizer(
      model_path(kByteChatModel),
      jinja_options("generation.jinja",
                    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
                    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
                    "{% endgeneration %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n"
                    "{% endfor %}"));
  const auto runs = supervised_runs(*processor, sample_of(tokenizer.tokenize(kTwoTurns, {})));
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].find("GNU Emacs.") != std::string::npos);
  CHECK(runs[1].find("<|im_end|>") == std::string::npos);  // outside the block
}

TEST_CASE("conversations a template refuses or rewrites are refused with the reason") {
  SUBCASE("raise_exception") {
    const ChatTokenizer tokenizer(
        model_path(kByteChatModel),
        jinja_options("raise.jinja",
                      "{% if messages[0].role != 'system' %}{{ raise_exception('Conversations "
                      "must start with a system message') }}{% endif %}"));
    const auto error = error_of(tokenizer.tokenize(kTwoTurns, {}));
    CHECK(error.reason == TokenizeErrorReason::template_refused);
    CHECK(error.message.find("must start with a system message") != std::string::npos);
  }
  SUBCASE("a template whose earlier turns change when later ones follow") {
    const ChatTokenizer tokenizer(
        model_path(kByteChatModel),
        jinja_options("count.jinja",
                      "{{ messages | length }} turns\n{% for m in messages %}{{ m.role }}: "
                      "{{ m.content }}\n{% endfor %}"));
    const auto error = error_of(tokenizer.tokenize(kTwoTurns, {}));
    CHECK(error.reason == TokenizeErrorReason::template_refused);
    CHECK(error.message.starts_with("message 1 (assistant)"));
  }
  SUBCASE("a template past its budgets: the record is refused naming the budget") {
    const ChatTokenizer endless(
        model_path(kByteChatModel),
        jinja_options("endless.jinja",
                      "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}"
                      "{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}"));
    auto error = error_of(endless.tokenize(kTwoTurns, {}));
    CHECK(error.reason == TokenizeErrorReason::template_refused);
    CHECK(error.message.find("the template takes more than 2000000 steps") != std::string::npos);
    const ChatTokenizer shouting(
        model_path(kByteChatModel),
        jinja_options("shouting.jinja", "{{ raise_exception('x' * 60000000) }}"));
    error = error_of(shouting.tokenize(kTwoTurns, {}));
    CHECK(error.reason == TokenizeErrorReason::template_refused);
    CHECK(error.message.find("x... (60000000 bytes in all)") != std::string::npos);
    CHECK(error.message.size() < 2048);
  }
  SUBCASE("message text holding a piece only the template or an image may write") {
    const ChatTokenizer tokenizer(model_path(kByteChatModel),
                                  jinja_options("chatml.jinja", kChatml));
    const Conversation forged{{{Role::user, "Hi <|image_pad|>"}, {Role::assistant, "Hello."}}, {}};
    const auto error = error_of(tokenizer.tokenize(forged, {}));
    CHECK(error.reason == TokenizeErrorReason::special_piece_in_text);
    CHECK(error.message.starts_with("message 0 (user)"));
  }
}

TEST_CASE("strftime_now sees template_date") {
  const ChatTokenizer tokenizer(
      model_path(kByteChatModel),
      jinja_options("date.jinja",
                    "Today: {{ strftime_now('%d %b %Y') }}\n{% for m in messages %}{{ m.content "
                    "}}\n{% endfor %}"));
  CHECK(std::get<SupervisedRendering>(tokenizer.render(kTwoTurns, {}))
            .text.starts_with("Today: 26 Jul 2024\n"));
}

TEST_CASE("a tokenizer_config.json gives the template by name and its special tokens") {
  auto options =
      jinja_options("tokenizer_config.json",
                    R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "chat_template": [
           {"name": "default", "template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}"},
           {"name": "tool_use", "template": "tools"}]})");
  const ChatTokenizer tokenizer(model_path(kByteChatModel), options);
  CHECK(std::get<SupervisedRendering>(tokenizer.render(kTwoTurns, {}))
            .text.starts_with("<s>What is free software?</s>"));
  options.eos_token = "<|im_end|>";  // the pipeline's setting wins
  CHECK(std::get<SupervisedRendering>(
            ChatTokenizer(model_path(kByteChatModel), options).render(kTwoTurns, {}))
            .text.starts_with("<s>What is free software?<|im_end|>"));
}

TEST_CASE("Jinja template settings that cannot work are ConfigErrors naming the field") {
  const auto field_of = [](const TokenizerOptions& options) {
    try {
      ChatTokenizer tokenizer(model_path(kByteChatModel), options);
    } catch (const ConfigError& error) {
      return error.field();
    }
    return std::string("(no error)");
  };
  auto options = jinja_options("chatml.jinja", kChatml);
  options.template_file = "/nonexistent/tokenizer_config.json";
  CHECK(field_of(options) == "template_file");
  CHECK(field_of(jinja_options("broken.jinja", "{% for m in messages %}")) == "template_file");
  // Nested past the parser's budget: refused when loaded, not a crash when rendered or dropped.
  std::string deep = "{{ 1";
  for (int i = 0; i < 30000; ++i) deep += " + 1";
  CHECK(field_of(jinja_options("deep.jinja", deep + " }}")) == "template_file");
  options = jinja_options("chatml.jinja", kChatml);
  options.add_bos = true;
  CHECK(field_of(options) == "add_bos");
  options = jinja_options("chatml.jinja", kChatml);
  options.template_date = "2024-02-30";
  CHECK(field_of(options) == "template_date");
  options = jinja_options("chatml.jinja", kChatml);
  options.image_content = ImageContent::text;
  options.image_text = "<image here>";
  CHECK(field_of(options) == "image_text");
  options = jinja_options("chatml.jinja", kChatml);
  options.chat_template = ChatTemplate::chatml;
  CHECK(field_of(options) == "template_file");  // a file without template = "jinja"
  options = options_for(ChatTemplate::jinja);
  CHECK(field_of(options) == "template_file");
  options = jinja_options("chatml.jinja", kChatml);
  options.tiktoken_preset = "p50k_base";
  CHECK(field_of(options) == "tiktoken_preset");
}

}  // namespace odbatch::test
