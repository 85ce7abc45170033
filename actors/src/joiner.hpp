#pragma once
// The joiner: reunites each sample's text and image parts and releases samples in shard order
// (a reorder buffer), so batches depend on data, config, seed and world size, never on timing.
// It releases only as many accepted samples as the packer asks for; rejections pass through in
// order as they come up. Each released sample returns a credit to the reader.
#include "epoch_context.hpp"

namespace odbatch::actors {

joiner_actor spawn_joiner(caf::actor_system& system, EpochContextPtr context);

}  // namespace odbatch::actors
