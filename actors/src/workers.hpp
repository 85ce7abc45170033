#pragma once
// The worker pools. Each worker asks the reader for work (two items at a time, so it never idles
// waiting for the next), does it, and sends the result to the joiner.
#include "epoch_context.hpp"

namespace odbatch::actors {

// Chat template + sentencepiece: conversation -> input_ids, labels, image spans. `worker` numbers
// the pool's workers (it seeds pipeline.worker_jitter_us).
tokenizer_worker_actor spawn_tokenizer_worker(caf::actor_system& system, EpochContextPtr context,
                                              std::uint32_t worker);

// libjpeg-turbo decode and resize to the image's patch grid.
image_decoder_worker_actor spawn_image_decoder_worker(caf::actor_system& system,
                                                      EpochContextPtr context,
                                                      std::uint32_t worker);

}  // namespace odbatch::actors
