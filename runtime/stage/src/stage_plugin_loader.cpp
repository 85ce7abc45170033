#include <dlfcn.h>

#include <string>

#include "odbatch/stage/stage_plugin.hpp"

namespace odbatch {
namespace {

std::string dl_error() {
  const char* error = dlerror();
  return error ? error : "unknown error";
}

}  // namespace

StageRegistry load_stage_plugin(const std::filesystem::path& file) {
  const std::string where = "stage plugin " + file.string();
  // Loaded for good (RTLD_NODELETE): a stage's vtable or a string it made may outlive the last
  // handle by a moment, and unloading code that may still run gains nothing.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) throw StagePluginError(where + ": cannot load: " + dl_error());
  std::shared_ptr<const void> library(handle, [](const void* h) { dlclose(const_cast<void*>(h)); });
  dlerror();
  void* symbol = dlsym(handle, kStagePluginSymbol);
  if (!symbol)
    throw StagePluginError(where + ": not an odbatch stage plugin (no " +
                           std::string(kStagePluginSymbol) +
                           "; define its stages with ODBATCH_STAGE_PLUGIN)");
  using Entry = const StagePluginInfo* (*)();
  const StagePluginInfo* info = reinterpret_cast<Entry>(symbol)();
  if (!info)
    throw StagePluginError(where + ": its " + std::string(kStagePluginSymbol) +
                           " returned nothing");
  const std::string built_for = info->odbatch_version ? info->odbatch_version : "(unknown)";
  if (built_for != ODBATCH_VERSION)
    throw StagePluginError(where + ": built for odbatch " + built_for + ", this is odbatch " +
                           ODBATCH_VERSION + "; rebuild the plugin against this version");
  if (info->abi != kStagePluginAbi)
    throw StagePluginError(where + ": stage plugin ABI " + std::to_string(info->abi) +
                           ", this odbatch loads ABI " + std::to_string(kStagePluginAbi));
  if (!info->register_stages) throw StagePluginError(where + ": registers no stages");
  StageRegistry plugin;
  try {
    info->register_stages(plugin);
  } catch (const std::exception& e) {
    throw StagePluginError(where + ": its registration failed: " + e.what());
  }
  if (plugin.empty()) throw StagePluginError(where + ": registers no stages");
  StageRegistry registry;
  for (const auto& name : plugin.names()) {
    StageType type = *plugin.find(name);
    type.library = library;
    type.origin = "plugin " + file.string();
    registry.add(std::move(type));
  }
  return registry;
}

}  // namespace odbatch
