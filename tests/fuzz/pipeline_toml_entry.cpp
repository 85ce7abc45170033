// A pipeline TOML file as `odbatch run` and Pipeline read it.
#include <string>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "pipeline_toml";
constexpr std::string_view kSource = "fuzz.toml";

}  // namespace

Outcome pipeline_toml(Input input) {
  const std::string_view document(reinterpret_cast<const char*>(input.data()), input.size());
  PipelineConfig config;
  try {
    // Relative paths resolve against the base directory; nothing is opened.
    config = PipelineConfig::from_toml(document, kSource, "/fuzz-base");
  } catch (const ConfigFileError& e) {
    expect(e.location().starts_with(kSource), kTarget, "a config error names the file");
    expect(!e.problem().empty(), kTarget, "a config error says what is wrong");
    return Outcome::rejected;
  }
  try {
    validate(config);
  } catch (const ConfigError& e) {
    contract_broken(kTarget, std::string("a loaded config is valid, but: ") + e.what());
  }
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
