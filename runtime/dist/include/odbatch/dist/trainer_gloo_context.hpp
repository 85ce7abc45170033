#pragma once
// A Gloo context for the trainer's own collectives (its gradient allreduce), separate from the
// loader's round mesh as a real trainer's communicator is, built through the run's TCP store. Only
// code that runs Gloo collectives itself includes this header; it declares Gloo's context only.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "odbatch/store/store.hpp"

namespace gloo {
class Context;
}

namespace odbatch {

struct TrainerGlooOptions {
  // The address the other ranks reach this one's pairs at.
  std::string hostname = "127.0.0.1";
  // For the rendezvous and, as the context's default, for each collective.
  std::chrono::milliseconds timeout{60'000};
};

// Every rank of the trainer calls it with a view of the store of its own (PrefixStore "trainer/",
// say), so that its keys never meet the loader's. Throws std::runtime_error naming the rank and
// the cause when the mesh cannot be built in time.
std::shared_ptr<gloo::Context> connect_trainer_gloo_context(Store& store, std::uint32_t rank,
                                                            std::uint32_t world_size,
                                                            const TrainerGlooOptions& options);

}  // namespace odbatch
