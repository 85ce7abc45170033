#pragma once
// The actor graph a pipeline file builds, as one description: every actor and pool (the built-in
// stages and the user's), in the order data flows, and the bounded edges between them with what
// bounds each. The pipeline spawns its actors from it and `odbatch graph` draws it, so what is
// drawn is what runs (docs/stages.md).
#include <cstdint>
#include <string>
#include <vector>

#include "odbatch/config/pipeline_config.hpp"

namespace odbatch {

enum class GraphRole : std::uint8_t {
  reader,
  record_stage,   // a user's record stage: a dispatcher and its workers
  tokenizer,      // the tokenizer workers
  image_decoder,  // the image-decoder workers
  joiner,
  sample_stage,  // a user's sample stage: a dispatcher and its workers
  packer,
  aligner,
  coordinator,
  emitter,
  trainer,  // the trainer's thread: not an actor, where the batch queue ends
};
std::string_view to_string(GraphRole role);

struct GraphNode {
  std::string name;  // as stats and metrics name the stage ("reader", a [[stage]]'s name)
  GraphRole role = GraphRole::reader;
  // The actors it spawns: 1 for a single actor, the workers of a built-in pool, the workers plus
  // their dispatcher for a user stage; 0 for the trainer.
  std::uint32_t actors = 1;
  std::string detail;           // what it does, and for a user stage its kind, type and plugin
  std::size_t stage_index = 0;  // a user stage's place among the stages of its kind
};

struct GraphEdge {
  std::string from;
  std::string to;
  std::string carries;         // "records", "text tasks", "batches", ...
  std::string bound;           // what bounds it, in words
  std::uint64_t capacity = 0;  // the most items in it
  bool credit = false;         // a credit flowing back, not data
};

struct PipelineGraph {
  std::vector<GraphNode> nodes;  // in the order data flows
  std::vector<GraphEdge> edges;

  const GraphNode* find(std::string_view name) const;
};

PipelineGraph pipeline_graph(const PipelineConfig& config);

}  // namespace odbatch
