#pragma once
// User stages (docs/stages.md): the RecordStage and SampleStage interfaces, their parameters,
// the StageRegistry a program registers its stage types in (PipelineOptions::stages), and
// ODBATCH_STAGE_PLUGIN, which makes a shared library a stage plugin a pipeline file can name:
//
//   void register_stages(odbatch::StageRegistry& registry) {
//     registry.add_record_stage("quality_filter", "1.0", [](const odbatch::StageParams& p) {
//       return std::make_unique<QualityFilter>(p.integer("min_tokens", 8));
//     }, {"too_short"});
//   }
//   ODBATCH_STAGE_PLUGIN(register_stages)
#include "odbatch/stage/stage.hpp"
#include "odbatch/stage/stage_params.hpp"
#include "odbatch/stage/stage_plugin.hpp"
#include "odbatch/stage/stage_registry.hpp"
#include "odbatch/version.hpp"

// Exports the plugin's entry point, recording the odbatch version and stage ABI its headers are
// from: a pipeline refuses a plugin built for another version, naming both.
#define ODBATCH_STAGE_PLUGIN(register_function)                                              \
  extern "C" __attribute__((visibility("default"))) const ::odbatch::StagePluginInfo*        \
  odbatch_stage_plugin_v1() {                                                                \
    static const ::odbatch::StagePluginInfo info{                                            \
        ::odbatch::kStagePluginAbi, ::odbatch::kHeaderVersion.data(), &(register_function)}; \
    return &info;                                                                            \
  }
