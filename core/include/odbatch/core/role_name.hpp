#pragma once
// The roles' names, as records and chat templates spell them.
#include <optional>
#include <string_view>

#include "odbatch/core/conversation.hpp"

namespace odbatch {

constexpr std::string_view role_name(Role role) {
  switch (role) {
    case Role::system:
      return "system";
    case Role::user:
      return "user";
    case Role::assistant:
      return "assistant";
    case Role::tool:
      return "tool";
  }
  return "unknown";
}

// The role named `name`; nullopt for any other name.
constexpr std::optional<Role> role_named(std::string_view name) {
  for (const Role role : {Role::system, Role::user, Role::assistant, Role::tool})
    if (role_name(role) == name) return role;
  return std::nullopt;
}

}  // namespace odbatch
