#pragma once
// One user stage of the pipeline's graph: a [[stage]] entry of the pipeline file
// (docs/stages.md), or set in code.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "odbatch/stage/stage_params.hpp"
#include "odbatch/stage/stage_registry.hpp"

namespace odbatch {

struct StageConfig {
  // Unique among the stages; names the stage's rejections ("<name>:<reason>"), its metrics and
  // its random generator's seed.
  std::string name;
  StageKind kind = StageKind::record;
  // The stage type to make (a plugin's, or one registered in code or from Python); empty: `name`.
  std::string type;
  // A shared library defining the type (ODBATCH_STAGE_PLUGIN); empty: registered in code.
  std::filesystem::path plugin;
  std::uint32_t workers = 1;
  // The configuration's own version of the stage, beside the type's: ranks and checkpoints
  // compare both, so a changed stage can be told apart without a new type.
  std::string version;
  // Rejection reasons the stage may give beside those its type declares, exported at 0.
  std::vector<std::string> reasons;
  StageParams params;

  const std::string& type_name() const { return type.empty() ? name : type; }

  friend bool operator==(const StageConfig&, const StageConfig&) = default;
};

// Whether `reason` can be a stage's rejection reason: letters, digits, '_', '-', '.'; 1 to 64
// bytes.
bool is_stage_reason(std::string_view reason);

// Throws ConfigError naming "stage[i].key" for the first invalid entry: a name that is empty,
// not made of letters, digits, '_' and '-', taken by a built-in stage or by another entry;
// workers outside 1..256; an invalid reason.
void validate_stages(const std::vector<StageConfig>& stages);

}  // namespace odbatch
