#pragma once
// The reader: walks the rank's epoch shard in order, reads and parses each record, reads its
// images' headers (which fix their visual-token counts), and hands text and image work to the
// worker pools as they ask for it. It keeps at most `reader_capacity` samples between itself and
// the joiner's exit: the joiner returns a credit for every sample it releases.
#include "epoch_context.hpp"

namespace odbatch::actors {

reader_actor spawn_reader(caf::actor_system& system, EpochContextPtr context);

}  // namespace odbatch::actors
