#include "odbatch/image/jpeg_decoder.hpp"
#include "pipeline_messages.hpp"
#include "worker_jitter.hpp"
#include "workers.hpp"

namespace odbatch::actors {

struct ImageDecoderWorkerState {
  EpochContextPtr context;
  JpegDecoder decoder;
  DecodedImage scratch;
  WorkerJitter jitter;
};

namespace {

constexpr int kOutstandingDemands = 2;

}  // namespace

caf::behavior image_decoder_worker_behavior(caf::stateful_actor<ImageDecoderWorkerState>* self,
                                            EpochContextPtr context, std::uint32_t worker) {
  report_exceptions_to(self, context, "image decoder worker");
  self->state.context = context;
  // Seeded apart from the tokenizer workers, whose numbers start at 0 too.
  self->state.jitter = WorkerJitter(context->config().flow.worker_jitter_us,
                                    context->config().batching.seed, 0x1'0000'0000ULL + worker);
  self->state.decoder = JpegDecoder(context->config().images.decoder_limits);
  return {
      [=](start_atom) {
        for (int i = 0; i < kOutstandingDemands; ++i)
          self->send(self->state.context->wiring().reader, image_demand_atom::value);
      },
      [=](const ImageTaskPtr& task) {
        auto& s = self->state;
        auto& epoch = *s.context;
        auto done = std::make_shared<ImageDone>();
        done->seq = task->seq;
        done->image = task->image;
        {
          StageTimer timer(epoch.stats().image_decoder);
          if (auto error =
                  s.decoder.decode(*task->jpeg, epoch.config().images.geometry, s.scratch)) {
            // Worded as the reader words the header stage's: the record's "file:line" first.
            done->rejection = Rejection{task->id, std::string(to_string(error->kind)),
                                        epoch.resources().index->describe(task->id) + ": image " +
                                            task->path + ": " + error->message};
          } else {
            auto pixels = std::make_shared<ImagePixels>();
            pixels->height = s.scratch.height;
            pixels->width = s.scratch.width;
            pixels->grid_h = s.scratch.grid.grid_h;
            pixels->grid_w = s.scratch.grid.grid_w;
            pixels->rgb = std::move(s.scratch.rgb);
            done->pixels = std::move(pixels);
          }
        }
        s.jitter.delay();
        self->send(epoch.wiring().joiner, ImageDonePtr(std::move(done)));
        self->send(epoch.wiring().reader, image_demand_atom::value);
      },
  };
}

caf::actor spawn_image_decoder_worker(caf::actor_system& system, EpochContextPtr context,
                                      std::uint32_t worker) {
  return system.spawn(image_decoder_worker_behavior, std::move(context), worker);
}

}  // namespace odbatch::actors
