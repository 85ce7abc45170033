#include "odbatch/source/conversation_parser.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

namespace odbatch {
namespace {

Conversation parsed(std::string_view record) {
  auto result = parse_conversation(record, "t.jsonl:5");
  if (const auto* rejection = std::get_if<RecordRejection>(&result)) {
    FAIL_CHECK("unexpected rejection: " << rejection->message);
    return {};
  }
  return std::get<Conversation>(std::move(result));
}

RecordRejection rejected(std::string_view record) {
  auto result = parse_conversation(record, "t.jsonl:5");
  if (std::holds_alternative<Conversation>(result)) {
    // At most the record's start: some are megabytes.
    FAIL_CHECK("record was accepted: " << record.substr(0, 200));
    return {};
  }
  return std::get<RecordRejection>(std::move(result));
}

void check_rejected(std::string_view record, RecordRejectReason reason, std::string_view message) {
  const auto record_start = record.substr(0, 200);
  CAPTURE(record_start);
  const auto rejection = rejected(record);
  CHECK(to_string(rejection.reason) == to_string(reason));
  CHECK(rejection.message == "t.jsonl:5: " + std::string(message));
}

}  // namespace

TEST_CASE("ShareGPT text conversation, unknown keys are ignored") {
  const auto conversation = parsed(
      R"({"id": "x1", "conversations": [{"from": "system", "value": "Be brief."},
          {"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"},
          {"from": "user", "value": "Caf\u00e9?"}, {"from": "assistant", "value": "Oui.", "w": 1}],
          "source": {"k": [1, 2]}})");
  CHECK(conversation == Conversation{{{Role::system, "Be brief."},
                                      {Role::user, "Hi"},
                                      {Role::assistant, "Hello!"},
                                      {Role::user, "Caf\xc3\xa9?"},
                                      {Role::assistant, "Oui."}},
                                     {}});
}

TEST_CASE("ShareGPT placeholders keep their positions, image and images both work") {
  CHECK(parsed(R"({"image": "coco/1.jpg", "conversations": [
            {"from": "human", "value": "What is this?\n<image>"},
            {"from": "gpt", "value": "A cat."}]})") ==
        Conversation{{{Role::user, "What is this?\n<image>"}, {Role::assistant, "A cat."}},
                     {"coco/1.jpg"}});
  CHECK(parsed(R"({"images": ["a.jpg", "b/c.jpg"], "conversations": [
            {"from": "human", "value": "<image> vs"}, {"from": "gpt", "value": "?"},
            {"from": "human", "value": "and <image>"}, {"from": "gpt", "value": "same"}]})") ==
        Conversation{{{Role::user, "<image> vs"},
                      {Role::assistant, "?"},
                      {Role::user, "and <image>"},
                      {Role::assistant, "same"}},
                     {"a.jpg", "b/c.jpg"}});
}

TEST_CASE("images without any placeholder go to the start of the first user message") {
  CHECK(parsed(R"({"images": ["a.jpg", "b.jpg"], "conversations": [
            {"from": "system", "value": "S"}, {"from": "human", "value": "Compare."},
            {"from": "gpt", "value": "Same."}, {"from": "human", "value": "Sure?"},
            {"from": "gpt", "value": "Yes."}]})")
            .messages[1]
            .content == "<image>\n<image>\nCompare.");
}

TEST_CASE("null image keys and an empty image list mean a text-only record") {
  const auto text_only = Conversation{{{Role::user, "q"}, {Role::assistant, "a"}}, {}};
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";
  CHECK(parsed("{\"image\": null, " + turns + "}") == text_only);
  CHECK(parsed("{\"images\": [], \"image\": null, " + turns + "}") == text_only);
}

TEST_CASE("OpenAI messages with string and part contents, image parts become placeholders") {
  CHECK(parsed(R"({"messages": [{"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "Left: "},
              {"type": "image", "image": "l.jpg"}, {"type": "text", "text": " right: "},
              {"type": "image_url", "image_url": {"url": "dir/r.jpg", "detail": "high"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Both "},
              {"type": "text", "text": "dogs."}]}]})") ==
        Conversation{{{Role::system, "S"},
                      {Role::user, "Left: <image> right: <image>"},
                      {Role::assistant, "Both dogs."}},
                     {"l.jpg", "dir/r.jpg"}});
}

TEST_CASE("OpenAI string contents take record-level images, placed like ShareGPT's") {
  CHECK(parsed(R"({"images": ["x.jpg"], "messages": [{"role": "user", "content": "Caption?"},
            {"role": "assistant", "content": "A tree."}]})") ==
        Conversation{{{Role::user, "<image>\nCaption?"}, {Role::assistant, "A tree."}}, {"x.jpg"}});
}

TEST_CASE("malformed JSON and invalid UTF-8, with the byte position") {
  check_rejected(R"({"conversations": [)", RecordRejectReason::malformed_json,
                 "malformed JSON at byte 20: syntax error while parsing value - unexpected end of "
                 "input; expected '[', '{', or a literal");
  check_rejected(R"({"a": 1,})", RecordRejectReason::malformed_json,
                 "malformed JSON at byte 9: syntax error while parsing object key - unexpected "
                 "'}'; expected string literal");
  check_rejected("{\"a\": \"Caf\xe9\"}", RecordRejectReason::invalid_utf8,
                 "invalid UTF-8 at byte 11 (0xe9)");
  // Overlong, surrogate, beyond U+10FFFF, truncated at the end: all refused.
  for (const std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    CHECK(rejected("\"" + bad).reason == RecordRejectReason::invalid_utf8);
  }
  CHECK(rejected("[\"\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9\"]").reason ==
        RecordRejectReason::not_an_object);
}

TEST_CASE("numbers out of range are malformed JSON, not an exception") {
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";
  check_rejected("{\"x\": 1e400, " + turns + "}", RecordRejectReason::malformed_json,
                 "malformed JSON: number overflow parsing '1e400'");
  check_rejected("{\"x\": -1e400, " + turns + "}", RecordRejectReason::malformed_json,
                 "malformed JSON: number overflow parsing '-1e400'");
  // A fuzzer's find: the overflow comes before the syntax error after it.
  check_rejected("99777891e891essa ", RecordRejectReason::malformed_json,
                 "malformed JSON: number overflow parsing '99777891e891'");
  // Huge integers and tiny fractions are fine: they become doubles, or zero.
  CHECK(parsed("{\"x\": 123456789012345678901234567890, \"y\": 1e-400, " + turns + "}")
            .messages.size() == 2);
}

TEST_CASE("nesting deeper than 64 levels and more than 2^20 values are refused, cheaply") {
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  // The record is level 1, so 63 levels fit under its key.
  CHECK(parsed("{\"x\": " + nested(63) + ", " + turns + "}").messages.size() == 2);
  check_rejected("{\"x\": " + nested(64) + ", " + turns + "}", RecordRejectReason::malformed_json,
                 "JSON nested deeper than 64 levels");
  for (const std::size_t depth : {65u, 100'000u, 2'000'000u}) {
    CAPTURE(depth);
    check_rejected(nested(depth), RecordRejectReason::malformed_json,
                   "JSON nested deeper than 64 levels");
    check_rejected(std::string(depth, '['), RecordRejectReason::malformed_json,
                   "JSON nested deeper than 64 levels");
  }

  const auto with_array = [&](std::size_t size) {
    std::string values;
    values.reserve(2 * size);
    for (std::size_t i = 0; i < size; ++i) values += i == 0 ? "0" : ",0";
    return "{\"x\": [" + values + "], " + turns + "}";
  };
  // Besides the array's elements: the record, the array, the conversation (an array of two
  // objects holding four strings), 9 values.
  const std::size_t kLimit = std::size_t{1} << 20;
  CHECK(parsed(with_array(kLimit - 9)).messages.size() == 2);
  check_rejected(with_array(kLimit - 8), RecordRejectReason::malformed_json,
                 "JSON with more than 1048576 values");
  check_rejected(with_array(4 * kLimit), RecordRejectReason::malformed_json,
                 "JSON with more than 1048576 values");
}

TEST_CASE("a record that is not an object") {
  check_rejected("[1, 2]", RecordRejectReason::not_an_object,
                 "record is a JSON array, not an object");
  check_rejected("\"text\"", RecordRejectReason::not_an_object,
                 "record is a JSON string, not an object");
}

TEST_CASE("missing fields name the key") {
  check_rejected(R"({"id": 1})", RecordRejectReason::missing_field,
                 "record: has neither `conversations` (ShareGPT) nor `messages` (OpenAI)");
  check_rejected(R"({"conversations": [{"from": "human"}]})", RecordRejectReason::missing_field,
                 "conversations[0]: no `value`");
  check_rejected(R"({"conversations": [{"value": "x"}]})", RecordRejectReason::missing_field,
                 "conversations[0]: no `from`");
  check_rejected(R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant"}]})",
                 RecordRejectReason::missing_field, "messages[1]: no `content`");
  check_rejected(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
      RecordRejectReason::missing_field, "messages[0].content[0].image_url: no `url`");
}

TEST_CASE("fields of the wrong type") {
  const auto wrong = RecordRejectReason::wrong_type;
  check_rejected(R"({"conversations": "human: hi"})", wrong,
                 "conversations: expected an array, got string");
  check_rejected(R"({"conversations": ["hi"]})", wrong,
                 "conversations[0]: expected an object, got string");
  check_rejected(R"({"conversations": [{"from": 1, "value": "x"}]})", wrong,
                 "conversations[0].from: expected a string, got number");
  check_rejected(
      R"({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": 7}]})", wrong,
      "conversations[1].value: expected a string, got number");
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";
  check_rejected("{\"image\": 3, " + turns + "}", wrong, "image: expected a string, got number");
  check_rejected("{\"images\": \"a.jpg\", " + turns + "}", wrong,
                 "images: expected an array of strings, got string");
  check_rejected("{\"images\": [\"a.jpg\", 2], " + turns + "}", wrong,
                 "images[1]: expected a string, got number");
  check_rejected(R"({"messages": {"role": "user"}})", wrong,
                 "messages: expected an array, got object");
  check_rejected(R"({"messages": [{"role": "assistant", "content": null}]})", wrong,
                 "messages[0].content: expected a string or an array of parts, got null");
  check_rejected(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]})",
                 wrong, "messages[0].content[0].text: expected a string, got number");
  check_rejected(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "a.jpg"}]}]})",
      wrong, "messages[0].content[0].image_url: expected an object with `url`, got string");
}

TEST_CASE("unsupported values and keys that exclude each other") {
  const auto bad = RecordRejectReason::bad_field;
  check_rejected(R"({"conversations": [], "messages": []})", bad,
                 "record: has both `conversations` and `messages`");
  check_rejected(
      R"({"image": "a.jpg", "images": ["b.jpg"], "conversations": [{"from": "human", "value": "q"}]})",
      bad, "record: has both `image` and `images`");
  check_rejected(R"({"messages": [{"role": "user", "content": [{"type": "audio"}]}]})", bad,
                 "messages[0].content[0].type: unsupported content part type 'audio' (expected "
                 "text, image or image_url)");
  check_rejected(
      R"({"images": ["b.jpg"], "messages": [{"role": "user", "content": [{"type": "image", "image": "a.jpg"}]}, {"role": "assistant", "content": "x"}]})",
      bad, "record: has both image content parts and record-level images");
}

TEST_CASE("unknown roles") {
  check_rejected(R"({"conversations": [{"from": "bot", "value": "x"}]})",
                 RecordRejectReason::unknown_role,
                 "conversations[0].from: unknown role 'bot' (expected system, human, user, gpt, "
                 "assistant, function_call or observation)");
  check_rejected(R"({"messages": [{"role": "function", "content": "x"}]})",
                 RecordRejectReason::unknown_role,
                 "messages[0].role: unknown role 'function' (expected system, user, assistant or "
                 "tool)");
  const std::string long_role(100, 'r');
  check_rejected(R"({"messages": [{"role": ")" + long_role + R"(", "content": "x"}]})",
                 RecordRejectReason::unknown_role,
                 "messages[0].role: unknown role '" + std::string(40, 'r') +
                     "...' (expected system, user, assistant or tool)");
}

TEST_CASE("OpenAI tool use: tools, tool calls with their arguments decoded, tool results") {
  const auto conversation = parsed(
      R"({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2}}}],
          "messages": [{"role": "user", "content": "Call f."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
              "function": {"name": "f", "arguments": "{\"z\": 1, \"y\": [true]}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "f", "content": ""},
            {"role": "assistant", "content": "Done."}],
          "chat_template_kwargs": {"enable_thinking": false, "date_string": "1 May"}})");
  REQUIRE(conversation.messages.size() == 4);
  // The record's key order is kept: a template writes tools and calls with tojson.
  CHECK(conversation.tools_json ==
        R"([{"type":"function","function":{"name":"f","parameters":{"b":1,"a":2}}}])");
  CHECK(conversation.messages[1] ==
        Message{Role::assistant, "",
                R"({"tool_calls":[{"id":"c1","type":"function","function":{"name":"f",)"
                R"("arguments":{"z":1,"y":[true]}}}],"content":null})"});
  // A tool's empty result is kept.
  CHECK(conversation.messages[2] == Message{Role::tool, "", R"({"tool_call_id":"c1","name":"f"})"});
  CHECK(conversation.messages[3] == Message{Role::assistant, "Done."});
  CHECK(conversation.template_variables_json ==
        R"({"enable_thinking":false,"date_string":"1 May"})");
}

TEST_CASE("LLaMA-Factory's ShareGPT tool use: function_call and observation turns, tools as text") {
  const auto conversation = parsed(
      R"({"tools": "[{\"name\": \"f\", \"parameters\": {}}]", "conversations": [
          {"from": "human", "value": "Call f."},
          {"from": "function_call", "value": "{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}"},
          {"from": "observation", "value": "42"}, {"from": "gpt", "value": "It is 42."}]})");
  REQUIRE(conversation.messages.size() == 4);
  CHECK(conversation.tools_json ==
        R"([{"type":"function","function":{"name":"f","parameters":{}}}])");
  CHECK(conversation.messages[1] ==
        Message{Role::assistant, "",
                R"({"content":null,"tool_calls":[{"type":"function","function":{"name":"f",)"
                R"("arguments":{"x":1}}}]})"});
  CHECK(conversation.messages[2] == Message{Role::tool, "42"});
  // LLaMA-Factory writes an empty string for "no tools".
  CHECK(parsed(R"({"tools": "", "conversations": [{"from": "human", "value": "Hi"},
                  {"from": "gpt", "value": "Hello."}]})")
            .tools_json.empty());
}

TEST_CASE("tool use that cannot work is rejected, naming the key") {
  check_rejected(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant",
                    "content": null, "tool_calls": [{"function": {"name": "f",
                    "arguments": "{oops"}}]}]})",
                 RecordRejectReason::bad_field,
                 "messages[1].tool_calls[0].function.arguments: '{oops' is not JSON");
  check_rejected(R"({"messages": [{"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y", "tool_calls": {"name": "f"}}]})",
                 RecordRejectReason::wrong_type,
                 "messages[1].tool_calls: expected an array, got object");
  // Without a tool call an assistant message needs its content.
  check_rejected(R"({"messages": [{"role": "user", "content": "x"},
                    {"role": "assistant", "content": null}]})",
                 RecordRejectReason::wrong_type,
                 "messages[1].content: expected a string or an array of parts, got null");
  check_rejected(R"({"tools": {"name": "f"}, "messages": [{"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y"}]})",
                 RecordRejectReason::wrong_type, "tools: expected an array of tools, got object");
  check_rejected(R"({"tools": "[oops", "conversations": [{"from": "human", "value": "x"},
                    {"from": "gpt", "value": "y"}]})",
                 RecordRejectReason::bad_field, "tools: '[oops' is not JSON");
  check_rejected(R"json({"conversations": [{"from": "human", "value": "x"},
                    {"from": "function_call", "value": "f(1)"}]})json",
                 RecordRejectReason::bad_field,
                 "conversations[1].value: 'f(1)' is not a JSON object (a function call)");
  check_rejected(R"({"messages": [{"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y"}], "chat_template_kwargs": {"tools": []}})",
                 RecordRejectReason::bad_field,
                 "chat_template_kwargs.tools: set by the pipeline, not by a record");
  check_rejected(R"({"messages": [{"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y"}], "chat_template_kwargs": [1]})",
                 RecordRejectReason::wrong_type,
                 "chat_template_kwargs: expected an object, got array");
  check_rejected(R"({"messages": [{"role": "user", "content": "x"},
                    {"role": "tool", "content": "<image>"}, {"role": "assistant", "content": "y"}],
                    "image": "a.jpg"})",
                 RecordRejectReason::placeholder_mismatch,
                 "messages[1]: `<image>` placeholder in a tool message (images are user input)");
}

TEST_CASE("empty conversations, empty user or assistant messages, no assistant turn") {
  check_rejected(R"({"conversations": []})", RecordRejectReason::empty_conversation,
                 "conversations: no messages");
  check_rejected(R"({"messages": []})", RecordRejectReason::empty_conversation,
                 "messages: no messages");
  check_rejected(R"({"conversations": [{"from": "human", "value": "q"},
                     {"from": "gpt", "value": " \n\t"}]})",
                 RecordRejectReason::empty_content, "conversations[1]: assistant message is empty");
  check_rejected(R"({"messages": [{"role": "user", "content": "q"},
                     {"role": "assistant", "content": []}]})",
                 RecordRejectReason::empty_content, "messages[1]: assistant message is empty");
  check_rejected(R"({"messages": [{"role": "user", "content": ""},
                     {"role": "assistant", "content": "Hello"}]})",
                 RecordRejectReason::empty_content, "messages[0]: user message is empty");
  check_rejected(R"({"conversations": [{"from": "system", "value": "S"},
                     {"from": "human", "value": "q"}]})",
                 RecordRejectReason::no_assistant_turn,
                 "conversations: no assistant message (nothing to supervise)");
}

TEST_CASE("an empty system message is kept, an image fills an empty user message") {
  CHECK(parsed(R"({"messages": [{"role": "system", "content": ""}, {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"}]})") ==
        Conversation{{{Role::system, ""}, {Role::user, "q"}, {Role::assistant, "a"}}, {}});
  CHECK(parsed(R"({"image": "a.jpg", "conversations": [{"from": "human", "value": ""},
            {"from": "gpt", "value": "A dog."}]})") ==
        Conversation{{{Role::user, "<image>\n"}, {Role::assistant, "A dog."}}, {"a.jpg"}});
}

TEST_CASE("placeholders must match the images one to one, never in assistant messages") {
  const auto mismatch = RecordRejectReason::placeholder_mismatch;
  check_rejected(
      R"({"image": "a.jpg", "conversations": [{"from": "human", "value": "<image><image>"},
                     {"from": "gpt", "value": "a"}]})",
      mismatch, "conversations: 2 `<image>` placeholders for 1 image");
  check_rejected(R"({"conversations": [{"from": "human", "value": "<image> what?"},
                     {"from": "gpt", "value": "a"}]})",
                 mismatch, "conversations: 1 `<image>` placeholder for 0 images");
  check_rejected(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "<image>"},
                     {"type": "image", "image": "a.jpg"}]}, {"role": "assistant", "content": "a"}]})",
                 mismatch, "messages: 2 `<image>` placeholders for 1 image");
  check_rejected(R"({"image": "a.jpg", "conversations": [{"from": "human", "value": "q"},
                     {"from": "gpt", "value": "<image>"}]})",
                 mismatch,
                 "conversations[1]: `<image>` placeholder in an assistant message (images are "
                 "user input)");
  check_rejected(R"({"image": "a.jpg", "conversations": [{"from": "system", "value": "<image>"},
                     {"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]})",
                 mismatch,
                 "conversations[0]: `<image>` placeholder in a system message (images are user "
                 "input)");
  check_rejected(R"({"image": "a.jpg", "conversations": [{"from": "system", "value": "S"},
                     {"from": "gpt", "value": "a"}]})",
                 mismatch, "conversations: no user message to hold the placeholders of 1 image");
}

TEST_CASE("image paths must be relative, non-empty, and not URLs") {
  const auto bad_path = RecordRejectReason::bad_image_path;
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";
  check_rejected("{\"image\": \"\", " + turns + "}", bad_path,
                 "image: image path is empty (paths are relative to the image root)");
  check_rejected("{\"images\": [\"ok.jpg\", \"/data/x.jpg\"], " + turns + "}", bad_path,
                 "images[1]: absolute image path '/data/x.jpg' (paths are relative to the image "
                 "root)");
  check_rejected(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://e.com/a.jpg"}}]}]})",
      bad_path,
      "messages[0].content[0].image_url.url: image URL 'https://e.com/a.jpg' is not supported "
      "(paths are relative to the image root)");
  check_rejected(
      R"({"messages": [{"role": "user", "content": [{"type": "image", "image": "data:image/jpeg;base64,AAAA"}]}]})",
      bad_path,
      "messages[0].content[0].image: image URL 'data:image/jpeg;base64,AAAA' is not supported "
      "(paths are relative to the image root)");
  check_rejected("{\"image\": \"../../README.md\", " + turns + "}", bad_path,
                 "image: image path '../../README.md' leaves the image root (paths are relative "
                 "to the image root)");
  check_rejected("{\"image\": \"a/./../b/../../c.jpg\", " + turns + "}", bad_path,
                 "image: image path 'a/./../b/../../c.jpg' leaves the image root (paths are "
                 "relative to the image root)");
  CHECK(parsed("{\"image\": \"a/../b/./c.jpg\", " + turns + "}").images ==
        std::vector<std::string>{"a/../b/./c.jpg"});
  check_rejected("{\"image\": \"a\\u0000.jpg\", " + turns + "}", bad_path,
                 "image: image path contains a NUL character (paths are relative to the image "
                 "root)");
}

TEST_CASE("every rejection reason has its own name") {
  std::set<std::string_view> names;
  for (int reason = 0; reason <= static_cast<int>(kLastRecordRejectReason); ++reason) {
    const auto name = to_string(static_cast<RecordRejectReason>(reason));
    CHECK(name != "?");
    names.insert(name);
  }
  CHECK(names.size() == static_cast<std::size_t>(kLastRecordRejectReason) + 1);
  CHECK(to_string(RecordRejectReason::placeholder_mismatch) == "placeholder_mismatch");
}

}  // namespace odbatch
