#include "worker_jitter.hpp"
#include "workers.hpp"

namespace odbatch::actors {

struct TokenizerWorkerState {
  EpochContextPtr context;
  WorkerJitter jitter;
};

namespace {

constexpr int kOutstandingDemands = 2;

TextDone tokenize(const EpochContext& context, const TextTask& task) {
  TextDone done;
  done.seq = task.seq;
  // Each source's own template, where its [[source.mix]] entry sets one.
  const auto& tokenizer = *context.resources().source_tokenizers.at(task.source);
  auto result = tokenizer.tokenize(task.conversation, task.visual_tokens, task.template_variables);
  if (auto* error = std::get_if<TokenizeError>(&result)) {
    done.rejection = Rejection{task.id, std::string(to_string(error->reason)),
                               task.where + ": " + error->message};
    return done;
  }
  done.sample =
      std::make_shared<SamplePayload>(task.id, std::get<TokenizedSample>(std::move(result)));
  return done;
}

}  // namespace

tokenizer_worker_actor::behavior_type tokenizer_worker_behavior(
    tokenizer_worker_actor::stateful_pointer<TokenizerWorkerState> self, EpochContextPtr context,
    std::uint32_t worker) {
  report_exceptions_to(self, context, "tokenizer worker");
  self->state.context = context;
  self->state.jitter = WorkerJitter(context->config().flow.worker_jitter_us,
                                    context->config().batching.seed, worker);
  return {
      [=](start_atom) {
        for (int i = 0; i < kOutstandingDemands; ++i)
          self->send(self->state.context->wiring().reader, text_demand_atom::value,
                     caf::actor_cast<tokenizer_worker_actor>(self));
      },
      [=](const TextTask& task) {
        auto& epoch = *self->state.context;
        TextDone done;
        {
          StageTimer timer(epoch.stats().tokenizer);
          done = tokenize(epoch, task);
        }
        self->state.jitter.delay();
        self->send(epoch.wiring().joiner, std::move(done));
        self->send(epoch.wiring().reader, text_demand_atom::value,
                   caf::actor_cast<tokenizer_worker_actor>(self));
      },
  };
}

tokenizer_worker_actor spawn_tokenizer_worker(caf::actor_system& system, EpochContextPtr context,
                                              std::uint32_t worker) {
  return system.spawn(tokenizer_worker_behavior, std::move(context), worker);
}

}  // namespace odbatch::actors
