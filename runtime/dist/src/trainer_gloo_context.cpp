#include "odbatch/dist/trainer_gloo_context.hpp"

#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <stdexcept>

#include "gloo_rendezvous_store.hpp"

namespace odbatch {

std::shared_ptr<gloo::Context> connect_trainer_gloo_context(Store& store, std::uint32_t rank,
                                                            std::uint32_t world_size,
                                                            const TrainerGlooOptions& options) {
  try {
    GlooRendezvousStore rendezvous(store, options.timeout);
    gloo::transport::tcp::attr attr(options.hostname.c_str());
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank),
                                                               static_cast<int>(world_size));
    context->setTimeout(options.timeout);
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context->connectFullMesh(rendezvous, device);
    return context;
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(rank) + ": cannot build the trainer's Gloo " +
                             "context of " + std::to_string(world_size) + " ranks at " +
                             options.hostname + ": " + e.what());
  }
}

}  // namespace odbatch
