#pragma once
// The pipeline's configuration: odbatch::PipelineConfig, read from a TOML file
// (PipelineConfig::from_toml_file, docs/pipeline-toml.md) or built in code and validated.
#include "odbatch/config/pipeline_config.hpp"
