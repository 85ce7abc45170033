#pragma once
// Reading a user's JSON file with errors that say where: "file:line:column" for syntax errors and
// the value's path (e.g. "ranks[2].samples[5].tokens") for missing, unknown or ill-typed values.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace odbatch::cli {

// A problem with what the user gave (files, arguments, scenario contents). The tool prints it as
// one line and exits with status 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a JSON file; throws InputError naming the file, and line:column for syntax errors.
nlohmann::json read_json_file(const std::filesystem::path& file);

// "parent.key", or "key" at the top level.
std::string member_path(std::string_view parent, std::string_view key);
// "parent[index]".
std::string element_path(std::string_view parent, std::size_t index);
// A value as an error's "got ..." shows it: numbers and strings literally, containers by kind.
std::string describe(const nlohmann::json& value);

// Typed access to a parsed document: every error names the document and the value's path.
class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  [[noreturn]] void fail(std::string_view path, std::string_view problem) const;

  // Requires an object whose keys are all in `allowed`.
  void expect_object(const nlohmann::json& value, std::string_view path,
                     std::initializer_list<std::string_view> allowed) const;
  void expect_array(const nlohmann::json& value, std::string_view path) const;
  const nlohmann::json& required(const nlohmann::json& object, std::string_view key,
                                 std::string_view path) const;

  std::uint64_t to_unsigned(
      const nlohmann::json& value, std::string_view path, std::uint64_t minimum = 0,
      std::uint64_t maximum = std::numeric_limits<std::uint64_t>::max()) const;
  std::string to_string(const nlohmann::json& value, std::string_view path) const;

 private:
  std::string source_;
};

// The member `key` of an object, or nullptr when absent.
const nlohmann::json* optional_member(const nlohmann::json& object, std::string_view key);

}  // namespace odbatch::cli
