#include "emitter.hpp"

#include <chrono>

namespace odbatch::actors {

namespace {

std::uint64_t nanoseconds_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

void count_batch(PipelineStats& stats, const Batch& batch) {
  const auto& info = batch.step_info();
  stats.batches.fetch_add(1, std::memory_order_relaxed);
  if (info.idle) {
    stats.idle_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  stats.samples_emitted.fetch_add(info.samples, std::memory_order_relaxed);
  stats.tokens.fetch_add(info.tokens, std::memory_order_relaxed);
  stats.labels.fetch_add(info.labels, std::memory_order_relaxed);
  const std::uint64_t padded = batch.layout() == BatchLayout::padded
                                   ? std::uint64_t{batch.rows()} * batch.seq_len()
                                   : info.tokens;
  stats.padded_tokens.fetch_add(padded, std::memory_order_relaxed);
}

}  // namespace

emitter_actor::behavior_type emitter_behavior(emitter_actor::stateful_pointer<EmitterState> self,
                                              EpochContextPtr context) {
  report_exceptions_to(self, context, "emitter");
  self->state.context = context;
  const auto& flow = context->config().flow;
  const auto& images = context->config().images;
  // pixel_values are made here, for planned steps only, on as many threads as decode images.
  self->state.collator.emplace(CollatorOptions{.layout = flow.layout,
                                               .pad_id = flow.pad_id,
                                               .idle_token = flow.pad_id,
                                               .pixel_values = images.pixel_values,
                                               .geometry = images.geometry,
                                               .pixel_threads = images.workers});
  return {
      [=](const StepWork& work) {
        auto& s = self->state;
        auto& stats = s.context->stats();
        auto batch = s.pool->acquire();
        {
          StageTimer timer(stats.emitter);
          if (work.info.idle) {
            s.collator->collate_idle(work.info, *batch);
          } else {
            s.rows.clear();
            for (const auto& row : work.rows) s.rows.push_back(row.get());
            const std::uint64_t helpers_before = s.collator->helper_cpu_ns();
            s.collator->collate(s.rows, work.info, *batch);
            stats.emitter.add_work(0, s.collator->helper_cpu_ns() - helpers_before);
          }
        }
        count_batch(stats, *batch);
        const auto wait_start = std::chrono::steady_clock::now();
        const bool accepted = s.context->queue().push({std::move(batch), work.round});
        if (accepted) stats.batch_queue.depth.fetch_add(1, std::memory_order_relaxed);
        stats.emitter.blocked_ns.fetch_add(nanoseconds_since(wait_start),
                                           std::memory_order_relaxed);
        if (stats.first_batch_ns.load() == 0)
          stats.first_batch_ns.store(nanoseconds_since(s.context->started()));
        // A closed or failed queue means nobody consumes this epoch any more.
        if (!accepted) self->quit();
      },
      [=](round_end_atom, std::uint64_t round) {
        self->send(self->state.context->wiring().aligner, emitted_atom::value, round);
      },
      [=](epoch_end_atom, std::uint64_t steps) {
        auto& epoch = *self->state.context;
        if (auto* ledger = epoch.ledger()) ledger->end_epoch(epoch.epoch(), steps);
        epoch.set_total_steps(steps);
        epoch.queue().close();
        epoch.stop_actors();
      },
  };
}

emitter_actor spawn_emitter(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn<caf::detached>(emitter_behavior, std::move(context));
}

}  // namespace odbatch::actors
