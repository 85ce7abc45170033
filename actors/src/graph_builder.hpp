#pragma once
// Spawns an epoch's actors from the pipeline's graph (odbatch/config/pipeline_graph.hpp): one
// spawner per role, every handle in the epoch's wiring before any actor starts. A new kind of
// actor is a role in the graph and a case here.
#include "epoch_context.hpp"
#include "odbatch/config/pipeline_graph.hpp"

namespace odbatch::actors {

void spawn_graph(caf::actor_system& system, const EpochContextPtr& epoch,
                 const PipelineGraph& graph);

// The actors the epoch's wiring holds for `node`, as spawn_graph made them.
std::uint32_t spawned_actors(const Wiring& wiring, const GraphNode& node);

}  // namespace odbatch::actors
