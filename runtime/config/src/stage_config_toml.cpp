#include "stage_config_toml.hpp"

#include "odbatch/config/config_file_error.hpp"
#include "toml_document.hpp"

namespace odbatch {
namespace {

using toml_document::location;

class EntryError : public std::runtime_error {
 public:
  EntryError(const toml::node& node, std::string key, const std::string& problem)
      : std::runtime_error(problem), node_(node), key_(std::move(key)) {}
  const toml::node& node() const { return node_; }
  const std::string& key() const { return key_; }

 private:
  const toml::node& node_;
  std::string key_;
};

std::string text(const toml::node& node, const std::string& key) {
  const auto* s = node.as_string();
  if (!s) throw EntryError(node, key, "expected a string");
  return s->get();
}

std::optional<StageParamScalar> scalar(const toml::node& node) {
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* s = node.as_string()) return s->get();
  return std::nullopt;
}

StageParams params_of(const toml::node& node) {
  const auto* table = node.as_table();
  if (!table) throw EntryError(node, "params", "expected a table of parameters");
  StageParams params;
  for (const auto& [key, value] : *table) {
    const std::string name = "params." + std::string(key.str());
    if (auto single = scalar(value)) {
      params.set(std::string(key.str()),
                 std::visit([](auto v) { return StageParamValue(v); }, *single));
      continue;
    }
    const auto* array = value.as_array();
    if (!array)
      throw EntryError(value, name,
                       "expected a string, number, boolean or array of them (no nested tables)");
    std::vector<StageParamScalar> values;
    for (const auto& element : *array) {
      auto item = scalar(element);
      if (!item)
        throw EntryError(element, name, "expected an array of strings, numbers or booleans");
      values.push_back(std::move(*item));
    }
    params.set(std::string(key.str()), std::move(values));
  }
  return params;
}

StageConfig stage_of(const toml::table& entry, const std::filesystem::path& base_dir) {
  StageConfig stage;
  bool has_kind = false;
  for (const auto& [key_name, value] : entry) {
    const std::string key(key_name.str());
    if (key == "name") {
      stage.name = text(value, key);
    } else if (key == "kind") {
      const auto kind = text(value, key);
      if (kind == "record") {
        stage.kind = StageKind::record;
      } else if (kind == "sample") {
        stage.kind = StageKind::sample;
      } else {
        throw EntryError(value, key, "expected one of record, sample, got \"" + kind + "\"");
      }
      has_kind = true;
    } else if (key == "type") {
      stage.type = text(value, key);
    } else if (key == "plugin") {
      const std::filesystem::path plugin(text(value, key));
      stage.plugin = plugin.is_absolute() ? plugin : base_dir / plugin;
    } else if (key == "workers") {
      const auto* i = value.as_integer();
      if (!i || i->get() < 1 || i->get() > 256)
        throw EntryError(value, key, "expected an integer between 1 and 256");
      stage.workers = static_cast<std::uint32_t>(i->get());
    } else if (key == "version") {
      stage.version = text(value, key);
    } else if (key == "reasons") {
      const auto* array = value.as_array();
      if (!array) throw EntryError(value, key, "expected an array of reason names");
      for (const auto& reason : *array) stage.reasons.push_back(text(reason, key));
    } else if (key == "params") {
      stage.params = params_of(value);
    } else {
      throw EntryError(value, key,
                       "unknown key (expected name, kind, type, plugin, workers, version, "
                       "reasons, params)");
    }
  }
  if (!has_kind)
    throw EntryError(entry, "kind", "missing: every [[stage]] says its kind, record or sample");
  if (stage.name.empty() && !entry.contains("name"))
    throw EntryError(entry, "name", "missing: every [[stage]] has a name");
  return stage;
}

}  // namespace

std::vector<StageConfig> stage_configs_from_toml(const toml::node& node, std::string_view source,
                                                 const std::filesystem::path& base_dir) {
  const auto* entries = node.as_array();
  if (!entries || !entries->is_array_of_tables())
    throw ConfigFileError(location(source, node.source()), "stage",
                          "expected [[stage]] tables, each a user stage with its name, kind and "
                          "type or plugin");
  std::vector<StageConfig> stages;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& entry = *entries->get(i)->as_table();
    try {
      stages.push_back(stage_of(entry, base_dir));
    } catch (const EntryError& e) {
      throw ConfigFileError(location(source, e.node().source()),
                            "stage[" + std::to_string(i) + "]." + e.key(), e.what());
    }
  }
  return stages;
}

}  // namespace odbatch
