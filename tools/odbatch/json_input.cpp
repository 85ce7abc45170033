#include "json_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace odbatch::cli {
namespace {

// "line:column" (1-based) of the character at a 0-based offset.
std::string line_and_column(std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, std::min(offset, text.size()));
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto last_newline = before.rfind('\n');
  const auto column =
      before.size() - (last_newline == std::string_view::npos ? 0 : last_newline + 1) + 1;
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix,
// on one line.
std::string syntax_problem(const nlohmann::json::parse_error& e) {
  std::string_view message = e.what();
  if (const auto at = message.find("parse error"); at != std::string_view::npos)
    if (const auto colon = message.find(": ", at); colon != std::string_view::npos)
      message.remove_prefix(colon + 2);
  std::string one_line;
  for (const char c : message) {
    if (c == '\n')
      one_line += "\\n";
    else if (c == '\t')
      one_line += "\\t";
    else
      one_line += c;
  }
  return one_line;
}

std::string expected_integer(std::uint64_t minimum) {
  if (minimum == 0) return "a non-negative integer";
  if (minimum == 1) return "a positive integer";
  return "an integer of at least " + std::to_string(minimum);
}

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t offending = e.byte == 0 ? 0 : e.byte - 1;
    throw InputError(file.string() + ":" + line_and_column(text, offending) +
                     ": JSON syntax error: " + syntax_problem(e));
  }
}

std::string member_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}

std::string element_path(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string describe(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  return value.dump();
}

void JsonReader::fail(std::string_view path, std::string_view problem) const {
  throw InputError(source_ + ": " + (path.empty() ? "top level" : std::string(path)) + ": " +
                   std::string(problem));
}

void JsonReader::expect_object(const nlohmann::json& value, std::string_view path,
                               std::initializer_list<std::string_view> allowed) const {
  if (!value.is_object()) fail(path, "expected an object, got " + describe(value));
  for (const auto& [key, member] : value.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string known;
    for (const auto name : allowed) known += (known.empty() ? "" : ", ") + std::string(name);
    fail(member_path(path, key), "unknown field (known fields: " + known + ")");
  }
}

void JsonReader::expect_array(const nlohmann::json& value, std::string_view path) const {
  if (!value.is_array()) fail(path, "expected an array, got " + describe(value));
}

const nlohmann::json& JsonReader::required(const nlohmann::json& object, std::string_view key,
                                           std::string_view path) const {
  const auto* member = optional_member(object, key);
  if (!member) fail(member_path(path, key), "missing");
  return *member;
}

std::uint64_t JsonReader::to_unsigned(const nlohmann::json& value, std::string_view path,
                                      std::uint64_t minimum, std::uint64_t maximum) const {
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() < minimum)
    fail(path, "expected " + expected_integer(minimum) + ", got " + describe(value));
  if (value.get<std::uint64_t>() > maximum)
    fail(path,
         "expected an integer at most " + std::to_string(maximum) + ", got " + describe(value));
  return value.get<std::uint64_t>();
}

std::string JsonReader::to_string(const nlohmann::json& value, std::string_view path) const {
  if (!value.is_string()) fail(path, "expected a string, got " + describe(value));
  return value.get<std::string>();
}

const nlohmann::json* optional_member(const nlohmann::json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace odbatch::cli
