#include "odbatch/config/pipeline_graph.hpp"

namespace odbatch {
namespace {

// Items a pool worker asks for ahead: it never idles waiting for the next.
constexpr std::uint32_t kWorkerDemands = 2;

std::string user_stage_detail(const StageConfig& stage) {
  return std::string(to_string(stage.kind)) + " stage, type " + stage.type_name() +
         (stage.plugin.empty() ? std::string(" (registered in code or Python)")
                               : " (plugin " + stage.plugin.filename().string() + ")") +
         ", dispatcher + " + std::to_string(stage.workers) + " worker" +
         (stage.workers == 1 ? "" : "s");
}

}  // namespace

std::string_view to_string(GraphRole role) {
  switch (role) {
    case GraphRole::reader:
      return "reader";
    case GraphRole::record_stage:
      return "record_stage";
    case GraphRole::tokenizer:
      return "tokenizer";
    case GraphRole::image_decoder:
      return "image_decoder";
    case GraphRole::joiner:
      return "joiner";
    case GraphRole::sample_stage:
      return "sample_stage";
    case GraphRole::packer:
      return "packer";
    case GraphRole::aligner:
      return "aligner";
    case GraphRole::coordinator:
      return "coordinator";
    case GraphRole::emitter:
      return "emitter";
    case GraphRole::trainer:
      return "trainer";
  }
  return "unknown";
}

const GraphNode* PipelineGraph::find(std::string_view name) const {
  for (const auto& node : nodes)
    if (node.name == name) return &node;
  return nullptr;
}

PipelineGraph pipeline_graph(const PipelineConfig& config) {
  PipelineGraph graph;
  auto& nodes = graph.nodes;
  auto& edges = graph.edges;
  const std::uint64_t credits =
      std::uint64_t{config.flow.reader_capacity} + reader_lookahead(config);
  const std::string credit_bound = "the reader's credits (reader_capacity " +
                                   std::to_string(config.flow.reader_capacity) + " + lookahead " +
                                   std::to_string(reader_lookahead(config)) + ")";
  const std::string pool_bound = std::to_string(kWorkerDemands) + " asked for per worker";

  nodes.push_back({"reader", GraphRole::reader, 1,
                   "reads and parses the shard's records, reads image headers, hands out work", 0});
  std::vector<const StageConfig*> record_stages, sample_stages;
  for (const auto& stage : config.stages)
    (stage.kind == StageKind::record ? record_stages : sample_stages).push_back(&stage);
  std::string previous = "reader";
  for (std::size_t i = 0; i < record_stages.size(); ++i) {
    const auto& stage = *record_stages[i];
    nodes.push_back(
        {stage.name, GraphRole::record_stage, stage.workers + 1, user_stage_detail(stage), i});
    edges.push_back({previous, stage.name, "records", credit_bound, credits, false});
    previous = stage.name;
  }
  if (!record_stages.empty())
    edges.push_back({previous, "reader", "staged records", credit_bound, credits, false});
  const auto& tokenizer = config.tokenizer;
  nodes.push_back({"tokenizer", GraphRole::tokenizer, tokenizer.workers,
                   "chat template and tokenizer, " + std::to_string(tokenizer.workers) + " worker" +
                       (tokenizer.workers == 1 ? "" : "s"),
                   0});
  nodes.push_back({"image_decoder", GraphRole::image_decoder, config.images.workers,
                   "decodes and resizes images, " + std::to_string(config.images.workers) +
                       " worker" + (config.images.workers == 1 ? "" : "s"),
                   0});
  edges.push_back({"reader", "tokenizer", "text tasks", pool_bound,
                   std::uint64_t{kWorkerDemands} * tokenizer.workers, false});
  edges.push_back({"reader", "image_decoder", "image tasks", pool_bound,
                   std::uint64_t{kWorkerDemands} * config.images.workers, false});
  nodes.push_back(
      {"joiner", GraphRole::joiner, 1, "joins text and images, restores shard order", 0});
  edges.push_back({"tokenizer", "joiner", "tokenized text", credit_bound, credits, false});
  edges.push_back({"image_decoder", "joiner", "decoded images", credit_bound, credits, false});
  edges.push_back({"joiner", "reader", "credits", credit_bound, credits, true});
  previous = "joiner";
  for (std::size_t i = 0; i < sample_stages.size(); ++i) {
    const auto& stage = *sample_stages[i];
    nodes.push_back(
        {stage.name, GraphRole::sample_stage, stage.workers + 1, user_stage_detail(stage), i});
    edges.push_back({previous, stage.name, "samples", credit_bound, credits, false});
    previous = stage.name;
  }
  if (!sample_stages.empty())
    edges.push_back({previous, "joiner", "staged samples", credit_bound, credits, false});
  const std::uint64_t window =
      std::uint64_t{config.batching.window} * (std::uint64_t{config.batching.max_defer_rounds} + 1);
  nodes.push_back({"packer", GraphRole::packer, 1, "screens samples, admits each round's", 0});
  edges.push_back({"joiner", "packer", "samples in shard order",
                   "the packer's admission (window " + std::to_string(config.batching.window) + ")",
                   config.batching.window, false});
  nodes.push_back(
      {"aligner", GraphRole::aligner, 1, "holds the window, groups by the round's plan", 0});
  edges.push_back({"packer", "aligner", "admitted samples",
                   "the window with deferred samples ((max_defer_rounds + 1) x window)", window,
                   false});
  nodes.push_back({"coordinator", GraphRole::coordinator, 1,
                   "runs the alignment round with the other ranks (own thread)", 0});
  edges.push_back({"aligner", "coordinator", "proposal and plan", "one round at a time", 1, false});
  nodes.push_back(
      {"emitter", GraphRole::emitter, 1, "collates steps into batches (own thread)", 0});
  edges.push_back({"aligner", "emitter", "steps", "one round's steps", 0, false});
  nodes.push_back({"trainer", GraphRole::trainer, 0, "next_batch() on the trainer's thread", 0});
  edges.push_back({"emitter", "trainer", "batches",
                   "the batch queue (prefetch " + std::to_string(config.flow.prefetch) + ")",
                   config.flow.prefetch, false});
  return graph;
}

}  // namespace odbatch
