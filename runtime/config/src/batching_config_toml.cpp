#include "odbatch/config/batching_config_toml.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "odbatch/config/batching_settings.hpp"
#include "toml_document.hpp"

namespace odbatch {
namespace {

using toml_document::location;

constexpr std::string_view kTableName = "batching";

template <class T>
std::string with_value(std::string kind, const T& value) {
  std::ostringstream text;
  text << kind << " (" << value << ")";
  return text.str();
}

// Describes a value for the "got ..." part of an error.
std::string describe_kind(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::floating_point:
      return with_value("a floating-point number", node.as_floating_point()->get());
    case toml::node_type::boolean:
      return with_value("a boolean", node.as_boolean()->get() ? "true" : "false");
    case toml::node_type::integer:
      return with_value("an integer", node.as_integer()->get());
    case toml::node_type::string:
      return "a string (\"" + node.as_string()->get() + "\")";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "a value of another type";
  }
}

SettingValue setting_value(const toml::node& node) {
  if (const auto* integer = node.as_integer()) return integer->get();
  if (const auto* text = node.as_string()) return text->get();
  return OtherKindValue{describe_kind(node)};
}

// ConfigError's message without its leading "field: ".
std::string problem_of(const ConfigError& error) {
  const std::string_view text = error.what();
  const std::string prefix = error.field() + ": ";
  return std::string(text.starts_with(prefix) ? text.substr(prefix.size()) : text);
}

// Runs validate() and locates its complaint at the offending key, or at the table when the value
// came from the base configuration.
void validate_located(const BatchingConfig& config, std::string_view source,
                      const toml::table* table, const toml::node* table_node) {
  try {
    validate(config);
  } catch (const ConfigError& e) {
    const toml::node* culprit = table ? table->get(e.field()) : nullptr;
    const toml::node* where = culprit ? culprit : table_node;
    throw ConfigFileError(where ? location(source, where->source()) : std::string(source),
                          std::string(kTableName) + "." + e.field(), problem_of(e));
  }
}

}  // namespace

BatchingConfig batching_config_from_toml(std::string_view document, std::string_view source,
                                         const BatchingConfig& base) {
  const toml::table root = toml_document::parse(document, source);
  BatchingConfig config = base;
  const toml::node* table_node = root.get(kTableName);
  if (!table_node) {
    validate_located(config, source, nullptr, nullptr);
    return config;
  }
  const toml::table* table = table_node->as_table();
  if (!table)
    throw ConfigFileError(location(source, table_node->source()), std::string(kTableName),
                          "expected a table, got " + describe_kind(*table_node));

  // Report the first problem in document order (the table itself is ordered by key).
  std::vector<std::pair<std::string_view, const toml::node*>> entries;
  for (const auto& [key, value] : *table) entries.emplace_back(key.str(), &value);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.second->source().begin;
    const auto& pb = b.second->source().begin;
    return std::pair(pa.line, pa.column) < std::pair(pb.line, pb.column);
  });
  for (const auto& [key, value] : entries) {
    try {
      set_batching_setting(config, key, setting_value(*value));
    } catch (const SettingError& e) {
      throw ConfigFileError(location(source, value->source()),
                            std::string(kTableName) + "." + std::string(key), e.what());
    }
  }
  validate_located(config, source, table, table_node);
  return config;
}

BatchingConfig load_batching_config_toml(const std::filesystem::path& file,
                                         const BatchingConfig& base) {
  return batching_config_from_toml(toml_document::read(file), file.string(), base);
}

}  // namespace odbatch
