#pragma once
// The pipeline a trainer embeds, one per data-parallel rank: odbatch::Pipeline and its
// PipelineOptions (docs/embedding.md). The Batch it yields is in odbatch/batch.hpp, its
// configuration in odbatch/pipeline_config.hpp, the rank it runs as in odbatch/dist_env.hpp.
#include "odbatch/actors/pipeline.hpp"
