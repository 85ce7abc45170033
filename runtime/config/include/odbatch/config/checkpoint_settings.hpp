#pragma once
// What a checkpoint records of a pipeline's configuration, so that a resume can refuse one whose
// batches would differ: the dataset (its index's fingerprint), the tokenizer model (a hash of the
// file) and every setting that decides samples, rejections, groups or batch bytes. What is safe
// to change is left out: pool sizes, capacities, lookahead, prefetch, scheduler threads,
// timeouts, the distributed and metrics tables, and the world size.
#include <vector>

#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/checkpoint.hpp"
#include "odbatch/source/dataset_index.hpp"

namespace odbatch {

// Throws TokenizerModelError (a ConfigError naming tokenizer.model and the path) when the
// tokenizer model is not a regular file or cannot be read, and a ConfigError naming the setting
// (tokenizer.template_file, source.mix[i].template_file) and the path for a template file.
std::vector<RunSetting> checkpoint_settings(const PipelineConfig& config,
                                            const DatasetIndex& index);

}  // namespace odbatch
