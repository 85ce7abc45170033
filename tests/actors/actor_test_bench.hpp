#pragma once
// A deterministic stage for the pipeline's actors: CAF's test scheduler runs every actor on the
// test's thread, one message at a time, and probes stand in for the neighbours of the actors
// under test, recording what they receive, in order. The coordinator is a stand-in that plans
// each proposal alone (one rank) and records it.
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "epoch_context.hpp"
#include "odbatch/dist/inproc_collective.hpp"

namespace odbatch::actors::test {

class ActorTestBench {
 public:
  // An epoch of `shard` (ids in reading order) with `config`, starting at `start` (a resumed
  // epoch's `shard` begins with its restored samples), every actor of its wiring a probe until a
  // test replaces it by the actor under test. config.stages are made from `stages`, each stage's
  // dispatcher a probe too; `index`, when given, locates the shard's records.
  ActorTestBench(PipelineConfig config, std::vector<SampleId> shard, EpochStart start = {},
                 const StageRegistry& stages = {},
                 std::shared_ptr<const DatasetIndex> index = nullptr);
  ~ActorTestBench();

  caf::actor_system& system() { return system_; }
  EpochContextPtr context() { return context_; }
  Wiring& wiring() { return context_->wiring(); }
  BatchQueue& queue() { return *queue_; }

  // Sends `message` from outside and runs every actor until none has a message left.
  template <class Handle, class... Ts>
  void send(const Handle& to, Ts&&... message) {
    caf::anon_send(to, std::forward<Ts>(message)...);
    run();
  }
  void run();

  // What the probe standing in for `actor` ("reader", "joiner", "packer", "aligner",
  // "coordinator", "emitter", or a user stage's name for its dispatcher) received since the last
  // call, one line per message.
  std::vector<std::string> received(const std::string& actor);

 private:
  caf::actor_system_config system_config_;
  caf::actor_system system_;
  caf::scheduler::test_coordinator& scheduler_;
  PipelineStats stats_;

 public:
  PipelineStats& stats() { return stats_; }

 private:
  std::shared_ptr<InprocGroup> group_;
  std::unique_ptr<Collective> collective_;
  std::shared_ptr<BatchQueue> queue_;
  EpochContextPtr context_;
  std::shared_ptr<std::map<std::string, std::vector<std::string>>> log_;
};

// A preprocessed sample of `tokens` tokens, all but the first supervised.
std::shared_ptr<SamplePayload> sample_of(SampleId id, std::uint32_t tokens);

}  // namespace odbatch::actors::test
