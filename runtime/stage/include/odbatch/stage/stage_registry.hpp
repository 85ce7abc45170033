#pragma once
// Where a pipeline finds the stages its [[stage]] entries name by `type`: registered in code by
// the program that embeds the pipeline (PipelineOptions::stages), by the Python binding for
// callables, or by a plugin (load_stage_plugin). A stage type is a factory, called once per
// worker with the entry's params, plus its identity: the version ranks and checkpoints compare
// and the rejection reasons it declares (exported at 0 before any occurs).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/stage/stage.hpp"
#include "odbatch/stage/stage_params.hpp"

namespace odbatch {

enum class StageKind : std::uint8_t { record, sample };
std::string_view to_string(StageKind kind);

using RecordStageFactory = std::function<std::unique_ptr<RecordStage>(const StageParams&)>;
using SampleStageFactory = std::function<std::unique_ptr<SampleStage>(const StageParams&)>;

struct StageType {
  std::string name;
  StageKind kind = StageKind::record;
  std::string version;               // compared across ranks and with checkpoints
  std::vector<std::string> reasons;  // rejection reasons, without the stage's name
  RecordStageFactory make_record;    // set for record stages
  SampleStageFactory make_sample;    // set for sample stages
  // Keeps the plugin that defines the type loaded while the type (and its stages) live.
  std::shared_ptr<const void> library;
  std::string origin;  // "registered in code", "plugin <file>", "Python"
};

class StageRegistry {
 public:
  // Registers a type; a name registered before is replaced.
  void add_record_stage(std::string name, std::string version, RecordStageFactory factory,
                        std::vector<std::string> reasons = {});
  void add_sample_stage(std::string name, std::string version, SampleStageFactory factory,
                        std::vector<std::string> reasons = {});
  void add(StageType type);
  // Every type of `other`, replacing those of the same name.
  void merge(const StageRegistry& other);

  const StageType* find(std::string_view name) const;
  std::vector<std::string> names() const;
  bool empty() const { return types_.empty(); }

 private:
  std::map<std::string, StageType, std::less<>> types_;
};

}  // namespace odbatch
