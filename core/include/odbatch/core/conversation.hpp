#pragma once
// A training conversation as read from a dataset record, before tokenization.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch {

enum class Role : std::uint8_t { system, user, assistant };

struct Message {
  Role role = Role::user;
  // Text with one `<image>` placeholder per image of this message, where the image goes.
  std::string content;

  friend bool operator==(const Message&, const Message&) = default;
};

struct Conversation {
  std::vector<Message> messages;
  // Image paths relative to the source's image root, in placeholder order.
  std::vector<std::string> images;

  friend bool operator==(const Conversation&, const Conversation&) = default;
};

// The placeholder that marks an image's position in a message's content.
inline constexpr std::string_view kImagePlaceholder = "<image>";

}  // namespace odbatch
