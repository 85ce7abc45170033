#pragma once
// The [batching] table of a TOML config file, read onto a BatchingConfig. Its keys are exactly
// BatchingConfig's field names; enum values are the names core's to_string produces.
#include <filesystem>
#include <string_view>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/core/config.hpp"

namespace odbatch {

// Applies the [batching] table of `document` over `base` and validates the result; keys the table
// omits keep base's values, and a document without the table yields `base`. Other tables belong
// to other readers and are ignored. `source` names the document in errors (usually its path).
// Throws ConfigFileError for syntax errors, unknown keys, bad values and failed validation.
BatchingConfig batching_config_from_toml(std::string_view document, std::string_view source,
                                         const BatchingConfig& base = {});

// The same for a file; an unreadable file is a ConfigFileError too.
BatchingConfig load_batching_config_toml(const std::filesystem::path& file,
                                         const BatchingConfig& base = {});

}  // namespace odbatch
