#pragma once
// The emitter: collates each step into a batch and pushes it into the bounded batch queue, on its
// own thread (it blocks when the trainer is behind); tells the aligner when a round's batches are
// all queued, and ends the epoch after its last step.
#include <memory>
#include <optional>
#include <vector>

#include "epoch_context.hpp"
#include "odbatch/batch/batch_collator.hpp"
#include "odbatch/batch/batch_pool.hpp"

namespace odbatch::actors {

struct EmitterState {
  EpochContextPtr context;
  std::optional<BatchCollator> collator;
  std::shared_ptr<BatchPool> pool = BatchPool::create();
  std::vector<const SamplePayload*> rows;
};

// The emitter's behaviour, for spawning it on any scheduler (tests run it on a deterministic one).
emitter_actor::behavior_type emitter_behavior(emitter_actor::stateful_pointer<EmitterState> self,
                                              EpochContextPtr context);

// Detached: blocks on the full batch queue on a thread of its own.
emitter_actor spawn_emitter(caf::actor_system& system, EpochContextPtr context);

}  // namespace odbatch::actors
