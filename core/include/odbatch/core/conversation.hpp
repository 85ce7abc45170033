#pragma once
// A training conversation as read from a dataset record, before tokenization.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace odbatch {

// `tool`: a tool's result, answering an assistant message's tool call.
enum class Role : std::uint8_t { system, user, assistant, tool };

struct Message {
  Message() = default;
  Message(Role role_, std::string content_, std::string fields_json_ = {})
      : role(role_), content(std::move(content_)), fields_json(std::move(fields_json_)) {}

  Role role = Role::user;
  // Text with one `<image>` placeholder per image of this message, where the image goes.
  std::string content;
  // The message's other keys as a JSON object (`tool_calls`, `tool_call_id`, `name`, ...), which a
  // Jinja template sees as the record has them; empty: none.
  std::string fields_json;

  friend bool operator==(const Message&, const Message&) = default;
};

struct Conversation {
  Conversation() = default;
  Conversation(std::vector<Message> messages_, std::vector<std::string> images_ = {})
      : messages(std::move(messages_)), images(std::move(images_)) {}

  std::vector<Message> messages;
  // Image paths relative to the source's image root, in placeholder order.
  std::vector<std::string> images;
  // The tools the assistant may call, a JSON array: a Jinja template's `tools`; empty: none.
  std::string tools_json;
  // This record's template variables (its `chat_template_kwargs`), a JSON object; empty: none.
  std::string template_variables_json;

  friend bool operator==(const Conversation&, const Conversation&) = default;
};

// The placeholder that marks an image's position in a message's content.
inline constexpr std::string_view kImagePlaceholder = "<image>";

}  // namespace odbatch
