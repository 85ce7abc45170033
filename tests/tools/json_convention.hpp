#pragma once
// The convention every subcommand's JSON report follows (docs/cli.md): a top-level object that
// begins with "command" and "version", snake_case keys throughout, and no integer a double cannot
// hold exactly (64-bit fingerprints and digests are "0x" hex strings).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace odbatch::test {

inline bool is_snake_case(const std::string& key) {
  if (key.empty() || key.front() < 'a' || key.front() > 'z') return false;
  for (const char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Every key below `value`, and every integer, named by its path in a failure.
inline void check_keys_and_numbers(const nlohmann::ordered_json& value, const std::string& path) {
  constexpr std::uint64_t kExactInDouble = std::uint64_t{1} << 53;
  if (value.is_number_unsigned())
    CHECK_MESSAGE(value.get<std::uint64_t>() <= kExactInDouble, path << " = " << value.dump());
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const auto n = value.get<std::int64_t>();
    CHECK_MESSAGE((n >= 0 ? static_cast<std::uint64_t>(n) : 0 - static_cast<std::uint64_t>(n)) <=
                      kExactInDouble,
                  path << " = " << value.dump());
  }
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      CHECK_MESSAGE(is_snake_case(key), path << ": key \"" << key << "\" is not snake_case");
      check_keys_and_numbers(member, path + "." + key);
    }
  }
  if (value.is_array())
    for (std::size_t i = 0; i < value.size(); ++i)
      check_keys_and_numbers(value[i], path + "[" + std::to_string(i) + "]");
}

// Checks `text`, the report of `odbatch <command>`, against the convention.
inline void check_report_convention(const std::string& text, const std::string& command) {
  const auto report = nlohmann::ordered_json::parse(text);
  REQUIRE(report.is_object());
  REQUIRE(report.size() >= 2);
  auto field = report.begin();
  CHECK(field.key() == "command");
  CHECK(field.value() == command);
  ++field;
  CHECK(field.key() == "version");
  CHECK(field.value() == ODBATCH_VERSION);
  check_keys_and_numbers(report, command);
}

}  // namespace odbatch::test
