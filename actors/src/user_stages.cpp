#include "user_stages.hpp"

#include "odbatch/core/config.hpp"
#include "odbatch/stage/stage_plugin.hpp"

namespace odbatch::actors {
namespace {

std::string registered_names(const StageRegistry& registry) {
  std::string names;
  for (const auto& name : registry.names()) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

StageType find_type(const StageConfig& stage, const std::string& at,
                    const StageRegistry& registered) {
  const auto& name = stage.type_name();
  if (!stage.plugin.empty()) {
    StageRegistry plugin;
    try {
      plugin = load_stage_plugin(stage.plugin);
    } catch (const StagePluginError& e) {
      throw ConfigError(at + "plugin", e.what());
    }
    const auto* type = plugin.find(name);
    if (!type)
      throw ConfigError(at + "type", "plugin " + stage.plugin.string() + " has no stage type \"" +
                                         name + "\" (it has: " + registered_names(plugin) + ")");
    return *type;
  }
  const auto* type = registered.find(name);
  if (!type)
    throw ConfigError(at + "type", "no stage type \"" + name + "\" is registered (registered: " +
                                       registered_names(registered) +
                                       ") and the entry names no plugin");
  return *type;
}

}  // namespace

UserStages make_user_stages(const PipelineConfig& config, const StageRegistry& registered,
                            PipelineStats& stats) {
  UserStages stages;
  for (std::size_t i = 0; i < config.stages.size(); ++i) {
    const auto& entry = config.stages[i];
    const std::string at = "stage[" + std::to_string(i) + "].";
    UserStage stage;
    stage.config = entry;
    stage.type = find_type(entry, at, registered);
    if (stage.type.kind != entry.kind)
      throw ConfigError(at + "kind", std::string(to_string(entry.kind)) + ", but stage type \"" +
                                         stage.type.name + "\" (" + stage.type.origin + ") is a " +
                                         std::string(to_string(stage.type.kind)) + " stage");
    for (const auto& reason : stage.type.reasons)
      if (!is_stage_reason(reason))
        throw ConfigError(at + "type", "stage type \"" + stage.type.name +
                                           "\" declares an invalid reason \"" + reason + "\"");
    for (std::uint32_t w = 0; w < entry.workers; ++w) {
      try {
        if (entry.kind == StageKind::record) {
          auto made = stage.type.make_record(entry.params);
          if (!made) throw StageParamError("the factory made no stage");
          stage.record_instances.push_back(std::move(made));
        } else {
          auto made = stage.type.make_sample(entry.params);
          if (!made) throw StageParamError("the factory made no stage");
          stage.sample_instances.push_back(std::move(made));
        }
      } catch (const std::exception& e) {
        throw ConfigError(at + "params", "stage type \"" + stage.type.name +
                                             "\" refused its parameters: " + e.what());
      }
    }
    (entry.kind == StageKind::record ? stages.record : stages.sample).push_back(std::move(stage));
  }
  // Counters are added once every stage is made: a failure above leaves the stats untouched.
  for (auto* list : {&stages.record, &stages.sample})
    for (auto& stage : *list)
      stage.counters =
          &stats.add_user_stage(stage.config.name, stage.config.kind == StageKind::record);
  return stages;
}

std::vector<RunSetting> user_stage_settings(const UserStages& stages) {
  std::vector<RunSetting> settings;
  for (const auto* list : {&stages.record, &stages.sample})
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto& stage = (*list)[i];
      settings.push_back({"stage." + stage.config.name,
                          std::string(to_string(stage.config.kind)) + " stage " +
                              std::to_string(i + 1) + " of " + std::to_string(list->size()) +
                              ", type " + stage.type.name + " version \"" + stage.type.version +
                              "\", entry version \"" + stage.config.version + "\", params " +
                              stage.config.params.canonical()});
    }
  return settings;
}

std::vector<std::string> user_stage_reasons(const UserStages& stages) {
  std::vector<std::string> reasons;
  for (const auto* list : {&stages.record, &stages.sample})
    for (const auto& stage : *list) {
      const auto& name = stage.config.name;
      reasons.push_back(name + ":exception");
      for (const auto& reason : stage.type.reasons) reasons.push_back(name + ":" + reason);
      for (const auto& reason : stage.config.reasons) reasons.push_back(name + ":" + reason);
    }
  return reasons;
}

}  // namespace odbatch::actors
