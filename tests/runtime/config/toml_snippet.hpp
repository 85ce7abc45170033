#pragma once
// A pipeline file made of a minimal base and a test's extra lines, parsed as "p.toml" relative to
// "/base", and the located error it gives, for the config tests of one [section] each.
#include <string>
#include <string_view>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"

namespace odbatch::test {

inline PipelineConfig parse_snippet(std::string_view base, const std::string& extra) {
  return PipelineConfig::from_toml(std::string(base) + extra, "p.toml", "/base");
}

// The ConfigFileError's message, or "" when the file parses.
inline std::string snippet_error(std::string_view base, const std::string& extra) {
  try {
    parse_snippet(base, extra);
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace odbatch::test
