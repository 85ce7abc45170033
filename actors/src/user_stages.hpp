#pragma once
// The pipeline's user stages ([[stage]]), made once per Pipeline and kept across epochs: each
// entry's type (from its plugin, or registered in code or from Python), one instance per worker,
// and its counters in the stats.
#include <memory>
#include <string>
#include <vector>

#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/run_settings.hpp"
#include "odbatch/metrics/pipeline_stats.hpp"
#include "odbatch/stage/stage_registry.hpp"

namespace odbatch::actors {

struct UserStage {
  StageConfig config;
  StageType type;
  // One per worker: a worker calls only its own, so a stage needs no locking.
  std::vector<std::shared_ptr<RecordStage>> record_instances;
  std::vector<std::shared_ptr<SampleStage>> sample_instances;
  UserStageCounters* counters = nullptr;  // in the pipeline's stats
};

struct UserStages {
  std::vector<UserStage> record;  // in the order they run
  std::vector<UserStage> sample;

  bool empty() const { return record.empty() && sample.empty(); }
};

// Resolves and makes every stage of config.stages, adding its counters to `stats`. Throws
// ConfigError naming "stage[i].key": an unknown type, a type of the other kind, a plugin that
// cannot be loaded, or a factory that refuses its params.
UserStages make_user_stages(const PipelineConfig& config, const StageRegistry& registered,
                            PipelineStats& stats);

// One batch-deciding setting per stage, "stage.<name>": its kind and place, type, versions and
// parameters (not its plugin's path or its workers).
std::vector<RunSetting> user_stage_settings(const UserStages& stages);

// Every rejection reason the stages declare, as counted ("<stage>:<reason>"), with each stage's
// "<stage>:exception".
std::vector<std::string> user_stage_reasons(const UserStages& stages);

}  // namespace odbatch::actors
