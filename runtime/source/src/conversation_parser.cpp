#include "odbatch/source/conversation_parser.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "utf8_validation.hpp"

namespace odbatch {
namespace {

// Ordered: a template that writes tools or tool calls with tojson keeps the record's key order.
using json = nlohmann::ordered_json;

// Unwinds from a helper to parse_conversation, which turns it into the returned rejection.
struct Rejected {
  RecordRejectReason reason;
  std::string problem;  // without the record's location
};

[[noreturn]] void reject(RecordRejectReason reason, std::string problem) {
  throw Rejected{reason, std::move(problem)};
}

// A value from the record, quoted and cut short so a huge or binary value cannot flood a log.
std::string shown_value(std::string_view value) {
  constexpr std::size_t kShown = 40;
  std::string shown(1, '\'');
  shown.append(value.substr(0, kShown));
  shown.append(value.size() > kShown ? "...'" : "'");
  return shown;
}

const json& field(const json& object, std::string_view key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) {
    reject(RecordRejectReason::missing_field, where + ": no `" + std::string(key) + "`");
  }
  return *found;
}

const std::string& string_field(const json& object, std::string_view key,
                                const std::string& where) {
  const json& value = field(object, key, where);
  const std::string value_where = where + "." + std::string(key);
  if (!value.is_string()) {
    reject(RecordRejectReason::wrong_type,
           value_where + ": expected a string, got " + value.type_name());
  }
  return value.get_ref<const std::string&>();
}

const json& object_at(const json& array, std::size_t i, const std::string& where) {
  const json& element = array[i];
  if (!element.is_object()) {
    reject(RecordRejectReason::wrong_type,
           where + ": expected an object, got " + element.type_name());
  }
  return element;
}

const json& non_empty_array(const json& value, const std::string& where) {
  if (!value.is_array()) {
    reject(RecordRejectReason::wrong_type, where + ": expected an array, got " + value.type_name());
  }
  if (value.empty()) reject(RecordRejectReason::empty_conversation, where + ": no messages");
  return value;
}

std::string element_where(const std::string& array_where, std::size_t i) {
  return array_where + "[" + std::to_string(i) + "]";
}

// Whether a relative path climbs above its root with "..", e.g. "a/../../b" (but not "a/../b").
bool leaves_root(std::string_view path) {
  int depth = 0;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto component = path.substr(0, slash);
    if (component == "..") {
      if (--depth < 0) return true;
    } else if (!component.empty() && component != ".") {
      ++depth;
    }
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  return false;
}

const std::string& checked_image_path(const std::string& path, const std::string& where) {
  const auto problem = [&]() -> std::optional<std::string> {
    if (path.empty()) return "image path is empty";
    if (path.front() == '/') return "absolute image path " + shown_value(path);
    if (path.find("://") != std::string::npos || path.starts_with("data:")) {
      return "image URL " + shown_value(path) + " is not supported";
    }
    if (path.find('\0') != std::string::npos) return "image path contains a NUL character";
    if (leaves_root(path)) return "image path " + shown_value(path) + " leaves the image root";
    return std::nullopt;
  }();
  if (problem) {
    reject(RecordRejectReason::bad_image_path,
           where + ": " + *problem + " (paths are relative to the image root)");
  }
  return path;
}

// The record-level `image` (one path) or `images` (a list of paths), null meaning none.
std::vector<std::string> record_images(const json& record) {
  const auto image = record.find("image");
  const auto images = record.find("images");
  const bool has_image = image != record.end() && !image->is_null();
  const bool has_images = images != record.end() && !images->is_null();
  if (has_image && has_images) {
    reject(RecordRejectReason::bad_field, "record: has both `image` and `images`");
  }
  std::vector<std::string> paths;
  if (has_image) {
    if (!image->is_string()) {
      reject(RecordRejectReason::wrong_type,
             std::string("image: expected a string, got ") + image->type_name());
    }
    paths.push_back(checked_image_path(image->get_ref<const std::string&>(), "image"));
  }
  if (has_images) {
    if (!images->is_array()) {
      reject(RecordRejectReason::wrong_type,
             "images: expected an array of strings, got " + std::string(images->type_name()));
    }
    for (std::size_t i = 0; i < images->size(); ++i) {
      const json& path = (*images)[i];
      const auto where = element_where("images", i);
      if (!path.is_string()) {
        reject(RecordRejectReason::wrong_type,
               where + ": expected a string, got " + path.type_name());
      }
      paths.push_back(checked_image_path(path.get_ref<const std::string&>(), where));
    }
  }
  return paths;
}

// A tool call's `function.arguments` given as JSON text (OpenAI's layout) becomes the object it
// holds, as Hugging Face's templates expect a mapping there (`arguments | tojson`).
json normalized_tool_call(json call, const std::string& where) {
  if (!call.is_object())
    reject(RecordRejectReason::wrong_type, where + ": expected an object, got " + call.type_name());
  const auto function = call.find("function");
  if (function == call.end() || !function->is_object()) return call;
  const auto arguments = function->find("arguments");
  if (arguments == function->end() || !arguments->is_string()) return call;
  json parsed = json::parse(arguments->get_ref<const std::string&>(), nullptr, false);
  if (parsed.is_discarded())
    reject(RecordRejectReason::bad_field,
           where + ".function.arguments: " + shown_value(arguments->get_ref<const std::string&>()) +
               " is not JSON");
  (*function)["arguments"] = std::move(parsed);
  return call;
}

// The keys of an OpenAI message other than `role` and `content`, its tool calls normalized.
json message_fields(const json& message, const std::string& where) {
  json fields = json::object();
  for (const auto& [key, value] : message.items()) {
    if (key == "role" || key == "content") continue;
    if (key != "tool_calls" || value.is_null()) {
      fields[key] = value;
      continue;
    }
    if (!value.is_array())
      reject(RecordRejectReason::wrong_type,
             where + ".tool_calls: expected an array, got " + value.type_name());
    json calls = json::array();
    for (std::size_t i = 0; i < value.size(); ++i)
      calls.push_back(normalized_tool_call(value[i], element_where(where + ".tool_calls", i)));
    fields[key] = std::move(calls);
  }
  return fields;
}

bool has_tool_calls(const json& fields) {
  const auto calls = fields.is_object() ? fields.find("tool_calls") : fields.end();
  return calls != fields.end() && calls->is_array() && !calls->empty();
}

// The record's `tools`: an array of tool descriptions, or the JSON text of one (LLaMA-Factory's
// ShareGPT layout). With `wrap_functions`, a bare function description becomes OpenAI's
// {"type": "function", "function": ...}, the form Hugging Face's templates take.
std::string record_tools(const json& record, bool wrap_functions) {
  const auto found = record.find("tools");
  if (found == record.end() || found->is_null()) return {};
  json tools = *found;
  if (tools.is_string()) {
    const std::string& text = found->get_ref<const std::string&>();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return {};
    tools = json::parse(text, nullptr, false);
    if (tools.is_discarded())
      reject(RecordRejectReason::bad_field, "tools: " + shown_value(text) + " is not JSON");
  }
  if (!tools.is_array())
    reject(RecordRejectReason::wrong_type,
           std::string("tools: expected an array of tools, got ") + tools.type_name());
  for (std::size_t i = 0; i < tools.size(); ++i) {
    json& tool = tools[i];
    if (!tool.is_object())
      reject(RecordRejectReason::wrong_type,
             element_where("tools", i) + ": expected an object, got " + tool.type_name());
    if (wrap_functions && !tool.contains("type"))
      tool = json{{"type", "function"}, {"function", std::move(tool)}};
  }
  return tools.empty() ? std::string() : tools.dump();
}

// Names a chat template is given by the pipeline itself, which a record may not set.
constexpr std::array<std::string_view, 3> kReservedTemplateVariables = {"messages", "tools",
                                                                        "add_generation_prompt"};

// The record's `chat_template_kwargs`: further variables for the chat template.
std::string record_template_variables(const json& record) {
  const auto found = record.find("chat_template_kwargs");
  if (found == record.end() || found->is_null()) return {};
  if (!found->is_object())
    reject(RecordRejectReason::wrong_type,
           std::string("chat_template_kwargs: expected an object, got ") + found->type_name());
  for (const auto& [key, value] : found->items())
    if (std::find(kReservedTemplateVariables.begin(), kReservedTemplateVariables.end(), key) !=
        kReservedTemplateVariables.end())
      reject(RecordRejectReason::bad_field,
             "chat_template_kwargs." + key + ": set by the pipeline, not by a record");
  return found->empty() ? std::string() : found->dump();
}

Conversation parse_sharegpt(const json& record) {
  const json& turns = non_empty_array(record.at("conversations"), "conversations");
  Conversation conversation;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    const auto where = element_where("conversations", i);
    const json& turn = object_at(turns, i, where);
    const std::string& from = string_field(turn, "from", where);
    Role role{};
    if (from == "human" || from == "user") {
      role = Role::user;
    } else if (from == "gpt" || from == "assistant") {
      role = Role::assistant;
    } else if (from == "system") {
      role = Role::system;
    } else if (from == "observation" || from == "tool") {
      role = Role::tool;
    } else if (from == "function_call") {
      // LLaMA-Factory's tool call: {"name": ..., "arguments": ...} as JSON text.
      const std::string& value = string_field(turn, "value", where);
      json call = json::parse(value, nullptr, false);
      if (call.is_discarded() || !call.is_object())
        reject(RecordRejectReason::bad_field,
               where + ".value: " + shown_value(value) + " is not a JSON object (a function call)");
      json wrapped{{"type", "function"}, {"function", std::move(call)}};
      json fields{{"content", nullptr},
                  {"tool_calls",
                   json::array({normalized_tool_call(std::move(wrapped), where + ".value")})}};
      conversation.messages.push_back({Role::assistant, std::string(), fields.dump()});
      continue;
    } else {
      reject(RecordRejectReason::unknown_role,
             where + ".from: unknown role " + shown_value(from) +
                 " (expected system, human, user, gpt, assistant, function_call or observation)");
    }
    conversation.messages.push_back({role, string_field(turn, "value", where)});
  }
  conversation.images = record_images(record);
  conversation.tools_json = record_tools(record, /*wrap_functions=*/true);
  return conversation;
}

// An OpenAI content: a string, or parts whose images become placeholders, their paths appended
// to `images`. Returns whether it had image parts.
bool append_openai_content(const json& content, const std::string& where, std::string& text,
                           std::vector<std::string>& images) {
  if (content.is_string()) {
    text = content.get_ref<const std::string&>();
    return false;
  }
  if (!content.is_array()) {
    reject(RecordRejectReason::wrong_type,
           where + ": expected a string or an array of parts, got " + content.type_name());
  }
  bool has_image_parts = false;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const auto part_where = element_where(where, i);
    const json& part = object_at(content, i, part_where);
    const std::string& type = string_field(part, "type", part_where);
    if (type == "text") {
      text += string_field(part, "text", part_where);
      continue;
    }
    if (type == "image") {
      images.push_back(
          checked_image_path(string_field(part, "image", part_where), part_where + ".image"));
    } else if (type == "image_url") {
      const auto url_where = part_where + ".image_url";
      const json& url = field(part, "image_url", part_where);
      if (!url.is_object()) {
        reject(RecordRejectReason::wrong_type,
               url_where + ": expected an object with `url`, got " + url.type_name());
      }
      images.push_back(checked_image_path(string_field(url, "url", url_where), url_where + ".url"));
    } else {
      reject(RecordRejectReason::bad_field, part_where + ".type: unsupported content part type " +
                                                shown_value(type) +
                                                " (expected text, image or image_url)");
    }
    text += kImagePlaceholder;
    has_image_parts = true;
  }
  return has_image_parts;
}

Conversation parse_openai(const json& record) {
  const json& messages = non_empty_array(record.at("messages"), "messages");
  Conversation conversation;
  bool has_image_parts = false;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto where = element_where("messages", i);
    const json& message = object_at(messages, i, where);
    const std::string& role_name = string_field(message, "role", where);
    Role role{};
    if (role_name == "user") {
      role = Role::user;
    } else if (role_name == "assistant") {
      role = Role::assistant;
    } else if (role_name == "system") {
      role = Role::system;
    } else if (role_name == "tool") {
      role = Role::tool;
    } else {
      reject(RecordRejectReason::unknown_role, where + ".role: unknown role " +
                                                   shown_value(role_name) +
                                                   " (expected system, user, assistant or tool)");
    }
    json fields = message_fields(message, where);
    Message parsed{role, {}};
    // An assistant message that only calls tools may have no content (null in OpenAI's layout):
    // the template then sees None.
    const auto content = message.find("content");
    if ((content == message.end() || content->is_null()) && role == Role::assistant &&
        has_tool_calls(fields))
      fields["content"] = nullptr;
    else
      has_image_parts |= append_openai_content(field(message, "content", where), where + ".content",
                                               parsed.content, conversation.images);
    if (!fields.empty()) parsed.fields_json = fields.dump();
    conversation.messages.push_back(std::move(parsed));
  }
  auto images = record_images(record);
  if (!images.empty()) {
    if (has_image_parts) {
      reject(RecordRejectReason::bad_field,
             "record: has both image content parts and record-level images");
    }
    conversation.images = std::move(images);
  }
  conversation.tools_json = record_tools(record, /*wrap_functions=*/false);
  return conversation;
}

std::size_t count_placeholders(std::string_view text) {
  std::size_t count = 0;
  for (auto at = text.find(kImagePlaceholder); at != std::string_view::npos;
       at = text.find(kImagePlaceholder, at + kImagePlaceholder.size())) {
    ++count;
  }
  return count;
}

// "1 image", "2 images".
std::string counted(std::size_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos;
}

// "a system", "an assistant", "a tool" (a user message may hold placeholders).
std::string role_with_article(Role role) {
  return role == Role::system ? "a system" : role == Role::assistant ? "an assistant" : "a tool";
}

// A user message and an assistant's reply need text; a system message, a tool's result and an
// assistant message that only calls tools may be empty.
bool must_have_content(const Message& message) {
  return message.role == Role::user || (message.role == Role::assistant && !calls_tools(message));
}

// The rules both formats share (see the header), placing images that have no placeholder;
// `messages_key` names the record's message list in messages.
void apply_shared_rules(Conversation& conversation, std::string_view messages_key) {
  const auto where = [&](std::size_t i) { return element_where(std::string(messages_key), i); };
  std::size_t placeholders = 0;
  bool has_assistant = false;
  for (std::size_t i = 0; i < conversation.messages.size(); ++i) {
    const Message& message = conversation.messages[i];
    const std::size_t count = count_placeholders(message.content);
    if (count != 0 && message.role != Role::user) {
      reject(RecordRejectReason::placeholder_mismatch, where(i) + ": `<image>` placeholder in " +
                                                           role_with_article(message.role) +
                                                           " message (images are user input)");
    }
    placeholders += count;
    has_assistant |= message.role == Role::assistant;
  }
  if (!has_assistant) {
    reject(RecordRejectReason::no_assistant_turn,
           std::string(messages_key) + ": no assistant message (nothing to supervise)");
  }
  const std::size_t images = conversation.images.size();
  if (placeholders == 0 && images > 0) {
    const auto first_user =
        std::find_if(conversation.messages.begin(), conversation.messages.end(),
                     [](const Message& message) { return message.role == Role::user; });
    if (first_user == conversation.messages.end()) {
      reject(RecordRejectReason::placeholder_mismatch,
             std::string(messages_key) + ": no user message to hold the placeholders of " +
                 counted(images, "image"));
    }
    std::string prefix;
    for (std::size_t i = 0; i < images; ++i) prefix.append(kImagePlaceholder).push_back('\n');
    first_user->content.insert(0, prefix);
  } else if (placeholders != images) {
    reject(RecordRejectReason::placeholder_mismatch,
           std::string(messages_key) + ": " + counted(placeholders, "`<image>` placeholder") +
               " for " + counted(images, "image"));
  }
  for (std::size_t i = 0; i < conversation.messages.size(); ++i) {
    const Message& message = conversation.messages[i];
    if (must_have_content(message) && is_blank(message.content)) {
      reject(RecordRejectReason::empty_content,
             where(i) + ": " + (message.role == Role::user ? "user" : "assistant") +
                 " message is empty");
    }
  }
}

std::string hex_byte(char byte) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  const auto value = static_cast<unsigned char>(byte);
  return {'0', 'x', kDigits[value >> 4], kDigits[value & 0xF]};
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 9: " head (or the "[json.exception.out_of_range.406] " of other errors).
std::string json_problem(const json::exception& error) {
  const std::string_view what = error.what();
  const auto column = what.find("column ");
  const auto colon = column == std::string_view::npos ? column : what.find(": ", column);
  if (colon != std::string_view::npos) return std::string(what.substr(colon + 2));
  const auto head_end = what.starts_with("[json.exception.") ? what.find("] ") : what.npos;
  return std::string(head_end == std::string_view::npos ? what : what.substr(head_end + 2));
}

// A conversation nests five levels deep and holds a few values per message. The limits bound
// what one record can cost: nlohmann builds a node of at least 16 bytes per value, so a record
// of 64 MiB of "[" or "0," would otherwise take gigabytes.
constexpr int kMaxJsonDepth = 64;
constexpr std::size_t kMaxJsonValues = std::size_t{1} << 20;

// Unwinds out of nlohmann's parser when a record goes over a limit.
struct OverJsonLimit {
  std::string problem;
};

json parse_within_limits(std::string_view record) {
  std::size_t values = 0;
  const json::parser_callback_t check_limits = [&values](int depth, json::parse_event_t event,
                                                         json&) {
    const bool container =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (container && depth >= kMaxJsonDepth) {
      throw OverJsonLimit{"JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    }
    if ((container || event == json::parse_event_t::value) && ++values > kMaxJsonValues) {
      throw OverJsonLimit{"JSON with more than " + std::to_string(kMaxJsonValues) + " values"};
    }
    return true;
  };
  return json::parse(record.begin(), record.end(), check_limits);
}

// The record's keys other than those the formats read, with their values as JSON text.
void collect_other_fields(const json& document, std::map<std::string, std::string>& fields) {
  for (const auto& [key, value] : document.items()) {
    if (key == "conversations" || key == "messages" || key == "image" || key == "images" ||
        key == "tools" || key == "chat_template_kwargs")
      continue;
    fields[key] = value.dump();
  }
}

Conversation parse_document(std::string_view record, std::span<const std::string> default_images,
                            std::map<std::string, std::string>* other_fields) {
  const json document = parse_within_limits(record);
  if (!document.is_object()) {
    reject(RecordRejectReason::not_an_object,
           std::string("record is a JSON ") + document.type_name() + ", not an object");
  }
  const bool sharegpt = document.contains("conversations");
  const bool openai = document.contains("messages");
  if (sharegpt && openai) {
    reject(RecordRejectReason::bad_field, "record: has both `conversations` and `messages`");
  }
  if (!sharegpt && !openai) {
    reject(RecordRejectReason::missing_field,
           "record: has neither `conversations` (ShareGPT) nor `messages` (OpenAI)");
  }
  Conversation conversation = sharegpt ? parse_sharegpt(document) : parse_openai(document);
  conversation.template_variables_json = record_template_variables(document);
  if (conversation.images.empty()) {
    conversation.images.assign(default_images.begin(), default_images.end());
  }
  apply_shared_rules(conversation, sharegpt ? "conversations" : "messages");
  if (other_fields) collect_other_fields(document, *other_fields);
  return conversation;
}

}  // namespace

std::variant<Conversation, RecordRejection> parse_conversation(
    std::string_view record, std::string_view where, std::span<const std::string> default_images,
    std::map<std::string, std::string>* other_fields) {
  const auto rejection = [&](RecordRejectReason reason, const std::string& problem) {
    return RecordRejection{reason, std::string(where) + ": " + problem};
  };
  if (const auto invalid = first_invalid_utf8(record)) {
    return rejection(RecordRejectReason::invalid_utf8, "invalid UTF-8 at byte " +
                                                           std::to_string(*invalid + 1) + " (" +
                                                           hex_byte(record[*invalid]) + ")");
  }
  // Whatever a record holds, it is rejected, never thrown: an exception here would end the
  // epoch (and, through the abort, every rank's) for one bad line.
  try {
    return parse_document(record, default_images, other_fields);
  } catch (const Rejected& rejected) {
    return rejection(rejected.reason, rejected.problem);
  } catch (const OverJsonLimit& over) {
    return rejection(RecordRejectReason::malformed_json, over.problem);
  } catch (const json::parse_error& error) {
    return rejection(
        RecordRejectReason::malformed_json,
        "malformed JSON at byte " + std::to_string(error.byte) + ": " + json_problem(error));
  } catch (const json::exception& error) {  // e.g. a number out of range: 1e400
    return rejection(RecordRejectReason::malformed_json, "malformed JSON: " + json_problem(error));
  } catch (const std::exception& error) {  // e.g. std::bad_alloc
    return rejection(RecordRejectReason::malformed_json,
                     std::string("cannot parse: ") + error.what());
  }
}

bool calls_tools(const Message& message) {
  return !message.fields_json.empty() &&
         has_tool_calls(json::parse(message.fields_json, nullptr, false));
}

std::optional<RecordRejection> conversation_problem(std::span<const Message> messages,
                                                    std::size_t images,
                                                    std::span<const std::string> new_paths) {
  try {
    for (std::size_t i = 0; i < new_paths.size(); ++i)
      checked_image_path(new_paths[i], "image " + shown_value(new_paths[i]));
    std::size_t placeholders = 0;
    bool has_assistant = false;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const Message& message = messages[i];
      const std::size_t count = count_placeholders(message.content);
      if (count != 0 && message.role != Role::user)
        reject(RecordRejectReason::placeholder_mismatch,
               element_where("messages", i) + ": `<image>` placeholder in " +
                   role_with_article(message.role) + " message (images are user input)");
      if (must_have_content(message) && is_blank(message.content))
        reject(RecordRejectReason::empty_content,
               element_where("messages", i) + ": " +
                   (message.role == Role::user ? "user" : "assistant") + " message is empty");
      placeholders += count;
      has_assistant |= message.role == Role::assistant;
    }
    if (!has_assistant)
      reject(RecordRejectReason::no_assistant_turn,
             "messages: no assistant message (nothing to supervise)");
    // Images are never placed here: the placeholders must already match them, even at zero.
    if (placeholders != images)
      reject(RecordRejectReason::placeholder_mismatch,
             "messages: " + counted(placeholders, "`<image>` placeholder") + " for " +
                 counted(images, "image"));
  } catch (const Rejected& rejected) {
    return RecordRejection{rejected.reason, rejected.problem};
  }
  return std::nullopt;
}

}  // namespace odbatch
