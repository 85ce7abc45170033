#include <vector>

#include "stage_call.hpp"
#include "stage_pools.hpp"

namespace odbatch::actors {

struct SampleStageWorkerState {
  EpochContextPtr context;
  std::size_t stage = 0;
  SampleStage* instance = nullptr;
  std::vector<StageSampleImage> images;  // reused from sample to sample
};

namespace {

constexpr int kOutstandingDemands = 2;

std::uint32_t supervised_targets(const std::vector<std::int32_t>& labels) {
  std::uint32_t count = 0;
  for (std::size_t i = 1; i < labels.size(); ++i) count += labels[i] != kIgnoreLabel;
  return count;
}

void run_stage(SampleStageWorkerState& s, const UserStage& stage, SampleWork& work) {
  const auto& epoch = *s.context;
  auto& sample = *work.sample;
  const auto& name = stage.config.name;
  const std::string where = epoch.resources().index->describe(sample.id);
  s.images.clear();
  for (auto& image : sample.images)
    s.images.push_back({image.grid, image.width, image.height, std::span(image.rgb)});
  StageSample view{sample.id,          where,         work.source,
                   sample.input_ids,   sample.labels, sample.image_spans,
                   std::span(s.images)};
  StageContext context(name, epoch.config().batching.seed, epoch.epoch(), sample.id);
  work.rejection =
      call_stage(name, sample.id, where, [&] { return s.instance->process(view, context); });
  // Labels may have changed: the packer sees the count the loss will.
  sample.supervised_targets = supervised_targets(sample.labels);
}

}  // namespace

sample_stage_worker_actor::behavior_type sample_stage_worker_behavior(
    sample_stage_worker_actor::stateful_pointer<SampleStageWorkerState> self,
    EpochContextPtr context, std::size_t stage, std::uint32_t worker) {
  const auto& stages = context->resources().stages.sample;
  report_exceptions_to(self, context, "sample stage " + stages[stage].config.name);
  self->state.context = context;
  self->state.stage = stage;
  self->state.instance = stages[stage].sample_instances[worker].get();
  const auto ask = [self] {
    const auto& s = self->state;
    self->send(s.context->wiring().sample_stages[s.stage].dispatcher, stage_demand_atom::value,
               caf::actor_cast<sample_stage_worker_actor>(self));
  };
  return {
      [=](start_atom) {
        for (int i = 0; i < kOutstandingDemands; ++i) ask();
      },
      [=](SampleWork& work) {
        auto& s = self->state;
        auto& epoch = *s.context;
        const auto& user_stage = epoch.resources().stages.sample[s.stage];
        if (!work.rejection) {
          StageTimer timer(user_stage.counters->work);
          run_stage(s, user_stage, work);
        }
        if (work.rejection) work.sample.reset();  // its image buffers go back to the pool now
        const auto& pools = epoch.wiring().sample_stages;
        if (!work.rejection && s.stage + 1 < pools.size()) {
          self->send(pools[s.stage + 1].dispatcher, std::move(work));
        } else {
          self->send(epoch.wiring().joiner, std::move(work));
        }
        ask();
      },
  };
}

sample_stage_worker_actor spawn_sample_stage_worker(caf::actor_system& system,
                                                    EpochContextPtr context, std::size_t stage,
                                                    std::uint32_t worker) {
  return system.spawn(sample_stage_worker_behavior, std::move(context), stage, worker);
}

}  // namespace odbatch::actors
