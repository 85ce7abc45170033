#pragma once
// The actors that turn admitted samples into aligned steps:
// - packer: the warm-up ramp and admission; asks the joiner for each round's samples (the next
//   threshold(k) accepted ones) and forwards them to the aligner, then closes the round;
// - aligner: holds the window; once a round is closed and the previous round's batches are all in
//   the batch queue, proposes, gets the plan from the coordinator, sends the steps to the
//   emitter in order, and keeps the deferred samples;
// - coordinator: the only actor that talks to other ranks; runs the round protocol on its own
//   thread (it blocks in the collective);
// - emitter (emitter.hpp): collates each step into a batch and pushes it into the bounded batch
//   queue.
#include "emitter.hpp"
#include "epoch_context.hpp"

namespace odbatch::actors {

packer_actor spawn_packer(caf::actor_system& system, EpochContextPtr context);
aligner_actor spawn_aligner(caf::actor_system& system, EpochContextPtr context);
// Detached: blocks in the collective on a thread of its own.
coordinator_actor spawn_coordinator(caf::actor_system& system, EpochContextPtr context);

}  // namespace odbatch::actors
