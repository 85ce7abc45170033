#pragma once
// Parses one dataset record (a JSON object) into a Conversation, detecting its format:
//
// ShareGPT / LLaVA:
//   {"conversations": [{"from": "system"|"human"|"user"|"gpt"|"assistant", "value": "..."}, ...],
//    "image": "a.jpg" | "images": ["a.jpg", ...]}
//   LLaMA-Factory's tool use: "function_call" (its value the JSON text of {"name", "arguments"})
//   is an assistant message calling that tool, "observation" (or "tool") the tool's result, and
//   `tools` the JSON text of a list of function descriptions, each becoming OpenAI's
//   {"type": "function", "function": ...}.
//   `<image>` in the text marks each image's position, in order. A record with images and no
//   placeholder at all gets one "<image>\n" per image at the start of its first user message
//   (LLaVA's convention).
// OpenAI:
//   {"messages": [{"role": "system"|"user"|"assistant"|"tool",
//                  "content": "..." | [{"type": "text", "text": "..."},
//                                      {"type": "image", "image": "a.jpg"},
//                                      {"type": "image_url", "image_url": {"url": "a.jpg"}}]}]}
//   Image parts become `<image>` at their position, in order. Top-level `image` / `images`, as in
//   the ShareGPT format, are accepted for string contents (LLaMA-Factory's convention).
//   A message's other keys (`tool_calls`, `tool_call_id`, `name`, ...) are kept for a Jinja
//   template (Message::fields_json), a tool call's `function.arguments` given as JSON text
//   decoded into the object it holds; an assistant message with tool calls may have a null
//   `content`. `tools` (an array) is the template's `tools`.
// Both: `chat_template_kwargs` (an object) holds the record's own template variables, which may not
// be `messages`, `tools` or `add_generation_prompt` (bad_field).
//
// Other keys (e.g. "id") are ignored; `image` / `images` set to null mean no images.
// Rules, each with its RecordRejectReason: the bytes are UTF-8 and one JSON object, nested at most
// 64 levels deep, holding at most 2^20 values and no number beyond a double's range such as 1e400
// (malformed_json: the limits bound what one record can cost); at least one message; at least one
// assistant message; no user or assistant message empty or whitespace-only after images are
// placed (an empty target teaches nothing, an empty prompt is a broken sample; an empty system
// message is kept, as many exports carry one, and so are a tool's empty result and an assistant
// message that only calls tools); placeholders only in user messages (images are
// input) and exactly one per image; image paths non-empty, relative to the dataset's image root
// without leaving it through "..", and not URLs. Image files themselves are checked later, by the
// decoder.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "odbatch/core/conversation.hpp"
#include "odbatch/source/record_rejection.hpp"

namespace odbatch {

// Never throws for bad input: every problem comes back as a rejection whose message begins with
// `where` (the record's location, e.g. "train.jsonl:12") and names the offending key.
// `default_images` are the record's images when it names none itself: those its container holds
// (a WebDataset sample's image members); the rules above then apply to them as to named ones.
// With `other_fields`, the record's other top-level keys are put there, each value as its JSON
// text (what record stages see).
std::variant<Conversation, RecordRejection> parse_conversation(
    std::string_view record, std::string_view where,
    std::span<const std::string> default_images = {},
    std::map<std::string, std::string>* other_fields = nullptr);

// Whether `message` calls tools: its fields_json holds a non-empty `tool_calls` list.
bool calls_tools(const Message& message);

// The first of the rules above that messages with `images` images break (a record stage's
// result), its message naming the offending message or image without a location; nullopt when
// they keep them all. `new_paths` are image paths not checked yet (those a stage named anew).
// Images are never placed: the placeholders must already match them.
std::optional<RecordRejection> conversation_problem(std::span<const Message> messages,
                                                    std::size_t images,
                                                    std::span<const std::string> new_paths);

}  // namespace odbatch
