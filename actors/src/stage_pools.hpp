#pragma once
// The user stages' pools: for each [[stage]], a dispatcher that queues the items sent to the
// stage and `workers` workers that each ask it for work (two items at a time, like the built-in
// pools), run the stage and send the item on: to the next stage of its kind, or back to the
// reader (records) or the joiner (samples). Items in a pool hold the reader's credits (they are
// between the reader and the joiner's exit), so the pools' memory is bounded with the reader's.
#include "epoch_context.hpp"

namespace odbatch::actors {

record_stage_dispatcher_actor spawn_record_stage_dispatcher(caf::actor_system& system,
                                                            EpochContextPtr context,
                                                            std::size_t stage);
sample_stage_dispatcher_actor spawn_sample_stage_dispatcher(caf::actor_system& system,
                                                            EpochContextPtr context,
                                                            std::size_t stage);
record_stage_worker_actor spawn_record_stage_worker(caf::actor_system& system,
                                                    EpochContextPtr context, std::size_t stage,
                                                    std::uint32_t worker);
sample_stage_worker_actor spawn_sample_stage_worker(caf::actor_system& system,
                                                    EpochContextPtr context, std::size_t stage,
                                                    std::uint32_t worker);

}  // namespace odbatch::actors
