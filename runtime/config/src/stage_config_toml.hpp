#pragma once
// The [[stage]] entries of a pipeline file. Private to runtime/config (toml++ stays out of public
// headers).
#include <filesystem>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "odbatch/config/stage_config.hpp"

namespace odbatch {

// `node` is the document's `stage` value. Throws ConfigFileError naming "stage[i].key" and its
// location.
std::vector<StageConfig> stage_configs_from_toml(const toml::node& node, std::string_view source,
                                                 const std::filesystem::path& base_dir);

}  // namespace odbatch
