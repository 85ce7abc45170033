#include <algorithm>

#include "odbatch/image/image_crop.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "stage_call.hpp"
#include "stage_pools.hpp"

namespace odbatch::actors {

struct RecordStageWorkerState {
  EpochContextPtr context;
  std::size_t stage = 0;
  RecordStage* instance = nullptr;
};

namespace {

constexpr int kOutstandingDemands = 2;

// What a conversation a stage left breaks of the parser's rules, as that stage's rejection. The
// paths the record was read with were checked then; only those the stage named anew are.
std::optional<Rejection> conversation_rejection(const std::string& stage, const RecordWork& work) {
  const auto& record = work.record;
  std::vector<std::string> new_paths;
  for (const auto& image : record.images)
    if (std::none_of(work.loaded.begin(), work.loaded.end(),
                     [&](const LoadedImage& loaded) { return loaded.path == image.path; }))
      new_paths.push_back(image.path);
  for (std::size_t i = 0; i < record.images.size(); ++i) {
    const auto& image = record.images[i];
    // A crop of an image named anew is checked once its header is read, after the stages.
    if (!image.crop || image.width == 0) continue;
    if (const auto bad = crop_problem(*image.crop, image.width, image.height))
      return Rejection{
          record.id, stage + ":bad_crop",
          record.where + ": after stage " + stage + ": image " + image.path + ": " + bad->message};
  }
  const auto problem = conversation_problem(record.messages, record.images.size(), new_paths);
  if (!problem) return std::nullopt;
  return Rejection{record.id, stage + ":" + std::string(to_string(problem->reason)),
                   record.where + ": after stage " + stage + ": " + problem->message};
}

void run_stage(const EpochContext& epoch, const UserStage& stage, RecordStage& instance,
               RecordWork& work) {
  auto& record = work.record;
  // The record's identity is the pipeline's: whatever the stage does to it is undone.
  const SampleId id = record.id;
  std::string where = record.where;
  const std::uint32_t source = record.source;
  const auto& name = stage.config.name;
  StageContext context(name, epoch.config().batching.seed, epoch.epoch(), id);
  work.rejection = call_stage(name, id, where, [&] { return instance.process(record, context); });
  record.id = id;
  record.where = std::move(where);
  record.source = source;
  if (!work.rejection) work.rejection = conversation_rejection(name, work);
}

}  // namespace

record_stage_worker_actor::behavior_type record_stage_worker_behavior(
    record_stage_worker_actor::stateful_pointer<RecordStageWorkerState> self,
    EpochContextPtr context, std::size_t stage, std::uint32_t worker) {
  const auto& user_stage = context->resources().stages.record[stage];
  report_exceptions_to(self, context, "record stage " + user_stage.config.name);
  self->state.context = context;
  self->state.stage = stage;
  self->state.instance = user_stage.record_instances[worker].get();
  const auto ask = [self] {
    const auto& s = self->state;
    self->send(s.context->wiring().record_stages[s.stage].dispatcher, stage_demand_atom::value,
               caf::actor_cast<record_stage_worker_actor>(self));
  };
  return {
      [=](start_atom) {
        for (int i = 0; i < kOutstandingDemands; ++i) ask();
      },
      [=](RecordWork& work) {
        auto& s = self->state;
        auto& epoch = *s.context;
        const auto& current = epoch.resources().stages.record[s.stage];
        if (!work.rejection) {
          StageTimer timer(current.counters->work);
          run_stage(epoch, current, *s.instance, work);
        }
        const auto& pools = epoch.wiring().record_stages;
        // A rejected record skips the stages left.
        if (!work.rejection && s.stage + 1 < pools.size()) {
          self->send(pools[s.stage + 1].dispatcher, std::move(work));
        } else {
          self->send(epoch.wiring().reader, std::move(work));
        }
        ask();
      },
  };
}

record_stage_worker_actor spawn_record_stage_worker(caf::actor_system& system,
                                                    EpochContextPtr context, std::size_t stage,
                                                    std::uint32_t worker) {
  return system.spawn(record_stage_worker_behavior, std::move(context), stage, worker);
}

}  // namespace odbatch::actors
