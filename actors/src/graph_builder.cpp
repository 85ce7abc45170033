#include "graph_builder.hpp"

#include "joiner.hpp"
#include "reader.hpp"
#include "round_actors.hpp"
#include "stage_pools.hpp"
#include "workers.hpp"

namespace odbatch::actors {

void spawn_graph(caf::actor_system& system, const EpochContextPtr& epoch,
                 const PipelineGraph& graph) {
  auto& w = epoch->wiring();
  for (const auto& node : graph.nodes) {
    switch (node.role) {
      case GraphRole::reader:
        w.reader = spawn_reader(system, epoch);
        break;
      case GraphRole::record_stage: {
        auto& pool = w.record_stages.emplace_back();
        pool.dispatcher = spawn_record_stage_dispatcher(system, epoch, node.stage_index);
        for (std::uint32_t n = 0; n + 1 < node.actors; ++n)
          pool.workers.push_back(spawn_record_stage_worker(system, epoch, node.stage_index, n));
        break;
      }
      case GraphRole::tokenizer:
        for (std::uint32_t n = 0; n < node.actors; ++n)
          w.tokenizers.push_back(spawn_tokenizer_worker(system, epoch, n));
        break;
      case GraphRole::image_decoder:
        for (std::uint32_t n = 0; n < node.actors; ++n)
          w.image_decoders.push_back(spawn_image_decoder_worker(system, epoch, n));
        break;
      case GraphRole::joiner:
        w.joiner = spawn_joiner(system, epoch);
        break;
      case GraphRole::sample_stage: {
        auto& pool = w.sample_stages.emplace_back();
        pool.dispatcher = spawn_sample_stage_dispatcher(system, epoch, node.stage_index);
        for (std::uint32_t n = 0; n + 1 < node.actors; ++n)
          pool.workers.push_back(spawn_sample_stage_worker(system, epoch, node.stage_index, n));
        break;
      }
      case GraphRole::packer:
        w.packer = spawn_packer(system, epoch);
        break;
      case GraphRole::aligner:
        w.aligner = spawn_aligner(system, epoch);
        break;
      case GraphRole::coordinator:
        w.coordinator = spawn_coordinator(system, epoch);
        break;
      case GraphRole::emitter:
        w.emitter = spawn_emitter(system, epoch);
        break;
      case GraphRole::trainer:
        break;  // the trainer's own thread
    }
  }
  // Every handle is in place before any actor starts: the pools ask for work, the packer opens
  // the epoch's first round.
  for (const auto& worker : w.tokenizers) caf::anon_send(worker, start_atom::value);
  for (const auto& worker : w.image_decoders) caf::anon_send(worker, start_atom::value);
  for (const auto& pool : w.record_stages)
    for (const auto& worker : pool.workers) caf::anon_send(worker, start_atom::value);
  for (const auto& pool : w.sample_stages)
    for (const auto& worker : pool.workers) caf::anon_send(worker, start_atom::value);
  caf::anon_send(w.packer, start_atom::value);
}

std::uint32_t spawned_actors(const Wiring& wiring, const GraphNode& node) {
  const auto count = [](const auto& handle) -> std::uint32_t { return handle ? 1 : 0; };
  const auto pool = [&](const auto& pools) -> std::uint32_t {
    if (node.stage_index >= pools.size()) return 0;
    const auto& p = pools[node.stage_index];
    return count(p.dispatcher) + static_cast<std::uint32_t>(p.workers.size());
  };
  switch (node.role) {
    case GraphRole::reader:
      return count(wiring.reader);
    case GraphRole::record_stage:
      return pool(wiring.record_stages);
    case GraphRole::tokenizer:
      return static_cast<std::uint32_t>(wiring.tokenizers.size());
    case GraphRole::image_decoder:
      return static_cast<std::uint32_t>(wiring.image_decoders.size());
    case GraphRole::joiner:
      return count(wiring.joiner);
    case GraphRole::sample_stage:
      return pool(wiring.sample_stages);
    case GraphRole::packer:
      return count(wiring.packer);
    case GraphRole::aligner:
      return count(wiring.aligner);
    case GraphRole::coordinator:
      return count(wiring.coordinator);
    case GraphRole::emitter:
      return count(wiring.emitter);
    case GraphRole::trainer:
      return 0;
  }
  return 0;
}

}  // namespace odbatch::actors
