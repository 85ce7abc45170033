#include "odbatch/config/stage_config.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "odbatch/core/config.hpp"

namespace odbatch {
namespace {

constexpr std::array<std::string_view, 8> kBuiltInStages{
    "reader", "tokenizer", "image_decoder", "joiner",
    "packer", "aligner",   "coordinator",   "emitter"};

bool is_name_char(char c, bool dot) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || (dot && c == '.');
}

}  // namespace

bool is_stage_reason(std::string_view reason) {
  return !reason.empty() && reason.size() <= 64 &&
         std::all_of(reason.begin(), reason.end(), [](char c) { return is_name_char(c, true); });
}

void validate_stages(const std::vector<StageConfig>& stages) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& stage = stages[i];
    const std::string at = "stage[" + std::to_string(i) + "].";
    if (stage.name.empty() || stage.name.size() > 64 ||
        !std::all_of(stage.name.begin(), stage.name.end(),
                     [](char c) { return is_name_char(c, false); }))
      throw ConfigError(at + "name",
                        "expected 1 to 64 letters, digits, '_' or '-', got \"" + stage.name + "\"");
    if (std::find(kBuiltInStages.begin(), kBuiltInStages.end(), stage.name) != kBuiltInStages.end())
      throw ConfigError(at + "name", "\"" + stage.name + "\" is a built-in stage's name");
    if (!names.insert(stage.name).second)
      throw ConfigError(at + "name", "another [[stage]] is named \"" + stage.name + "\"");
    if (stage.workers < 1 || stage.workers > 256)
      throw ConfigError(at + "workers", "expected 1 to 256, got " + std::to_string(stage.workers));
    for (const auto& reason : stage.reasons)
      if (!is_stage_reason(reason))
        throw ConfigError(at + "reasons", "\"" + reason +
                                              "\" is not a reason: 1 to 64 letters, digits, '_', "
                                              "'-' or '.'");
  }
}

}  // namespace odbatch
