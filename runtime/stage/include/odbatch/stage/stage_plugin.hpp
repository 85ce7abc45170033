#pragma once
// A stage plugin: a shared library built against the installed package that registers its stage
// types. It defines them with ODBATCH_STAGE_PLUGIN (odbatch/stage.hpp), which exports one C
// function returning a StagePluginInfo; the loader refuses a plugin whose ABI or odbatch version
// is not this library's, naming both, since stages pass C++ types across the boundary.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "odbatch/stage/stage_registry.hpp"

namespace odbatch {

// Raised when the layout of StagePluginInfo or the calling convention of stages changes.
inline constexpr std::uint32_t kStagePluginAbi = 1;

struct StagePluginInfo {
  std::uint32_t abi = 0;             // kStagePluginAbi of the headers it was built with
  const char* odbatch_version = "";  // their odbatch version
  void (*register_stages)(StageRegistry& registry) = nullptr;
};

// The symbol ODBATCH_STAGE_PLUGIN defines.
inline constexpr const char* kStagePluginSymbol = "odbatch_stage_plugin_v1";

class StagePluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads `file` and returns the types it registers, each keeping the library loaded. Throws
// StagePluginError naming the file: it cannot be loaded, is no odbatch stage plugin, was built
// for another odbatch version (both named) or ABI, registers nothing, or its registration throws.
StageRegistry load_stage_plugin(const std::filesystem::path& file);

}  // namespace odbatch
