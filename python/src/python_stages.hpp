#pragma once
// Python callables as user stages: odbatch.Pipeline(config, stages={"name": callable}) for the
// [[stage]] entries that name no plugin (docs/stages.md). A record stage gets the record as a
// dict, a sample stage gets numpy arrays; each returns the (possibly changed) dict, or raises
// odbatch.Reject(reason[, detail]). Calls take the GIL on the stage's worker thread.
#include <pybind11/pybind11.h>

#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/stage/stage_registry.hpp"

namespace odbatch::python {

// The exception type a stage raises to reject (odbatch.Reject), made once at import.
void register_reject(pybind11::module_& m);

// A stage type for each entry of `stages` (name -> callable) that a [[stage]] of `config`
// without a plugin names by type, of that entry's kind. Throws ConfigError naming a key of
// `stages` no such entry names, or a value that is not callable.
StageRegistry python_stages(const PipelineConfig& config, const pybind11::dict& stages);

}  // namespace odbatch::python
