#include <optional>

#include "odbatch/image/image_processor.hpp"
#include "pooled_pixels.hpp"
#include "worker_jitter.hpp"
#include "workers.hpp"

namespace odbatch::actors {

struct ImageDecoderWorkerState {
  EpochContextPtr context;
  std::optional<ImageProcessor> processor;  // set by the behaviour: it needs the config
  WorkerJitter jitter;
};

namespace {

constexpr int kOutstandingDemands = 2;

}  // namespace

image_decoder_worker_actor::behavior_type image_decoder_worker_behavior(
    image_decoder_worker_actor::stateful_pointer<ImageDecoderWorkerState> self,
    EpochContextPtr context, std::uint32_t worker) {
  report_exceptions_to(self, context, "image decoder worker");
  self->state.context = context;
  // Seeded apart from the tokenizer workers, whose numbers start at 0 too.
  self->state.jitter = WorkerJitter(context->config().flow.worker_jitter_us,
                                    context->config().batching.seed, 0x1'0000'0000ULL + worker);
  const auto& images = context->config().images;
  // Images wait in the window as uint8 RGB (3 bytes a pixel, where float32 pixel_values take 24
  // with Qwen2-VL's temporal patch): the emitter makes pixel_values for planned steps only.
  PixelValuesConfig uint8_rgb = images.pixel_values;
  uint8_rgb.dtype = PixelDtype::uint8;
  self->state.processor.emplace(images.decoder_limits, images.geometry, uint8_rgb);
  return {
      [=](start_atom) {
        for (int i = 0; i < kOutstandingDemands; ++i)
          self->send(self->state.context->wiring().reader, image_demand_atom::value,
                     caf::actor_cast<image_decoder_worker_actor>(self));
      },
      [=](const ImageTask& task) {
        auto& s = self->state;
        auto& epoch = *s.context;
        ImageDone done;
        done.seq = task.seq;
        done.image = task.image;
        {
          StageTimer timer(epoch.stats().image_decoder);
          // The image that travels to the collator is decoded into a pooled buffer, given back
          // when its sample is released; the processor's own buffers (the DCT-scaled decode,
          // the resize's bands of rows) are reused from image to image.
          const auto& pool = epoch.resources().image_buffers;
          DecodedImage image = pool->take();
          if (image.rgb.capacity() + image.patch_values.capacity() > 0)
            epoch.stats().image_buffers_reused.fetch_add(1, std::memory_order_relaxed);
          if (const auto error = s.processor->process(*task.jpeg, image, task.crop)) {
            pool->give_back(std::move(image));
            // Worded as the reader words the header stage's: the record's "file:line" first.
            done.rejection = Rejection{task.id, std::string(to_string(error->kind)),
                                       epoch.resources().index->describe(task.id) + ": image " +
                                           task.path + ": " + error->message};
          } else {
            done.decoded = pooled_image(pool, std::move(image));
          }
        }
        s.jitter.delay();
        self->send(epoch.wiring().joiner, std::move(done));
        self->send(epoch.wiring().reader, image_demand_atom::value,
                   caf::actor_cast<image_decoder_worker_actor>(self));
      },
  };
}

image_decoder_worker_actor spawn_image_decoder_worker(caf::actor_system& system,
                                                      EpochContextPtr context,
                                                      std::uint32_t worker) {
  return system.spawn(image_decoder_worker_behavior, std::move(context), worker);
}

}  // namespace odbatch::actors
