#include "actor_test_bench.hpp"

#include <span>

#include "odbatch/core/plan.hpp"

namespace odbatch::actors::test {
namespace {

using Log = std::map<std::string, std::vector<std::string>>;

std::string id_list(const std::vector<SampleId>& ids) {
  std::string text;
  for (const auto id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

std::string describe(const Joined& joined) {
  if (joined.sample) return "sample " + std::to_string(joined.sample->id);
  return "rejected " + std::to_string(joined.rejection->id);
}

std::string describe(const std::optional<Rejection>& rejection) {
  return rejection ? " rejected " + rejection->reason : std::string(" kept");
}

std::string describe(const caf::message& m) {
  if (m.match_elements<Joined>()) return describe(m.get_as<Joined>(0));
  if (m.match_elements<RecordWork>()) {
    const auto& work = m.get_as<RecordWork>(0);
    std::string text = "record " + std::to_string(work.record.id) + describe(work.rejection);
    for (const auto& message : work.record.messages) text += " | " + message.content;
    return text;
  }
  if (m.match_elements<SampleWork>()) {
    const auto& work = m.get_as<SampleWork>(0);
    const auto id = work.sample ? work.sample->id : work.rejection->id;
    return "sample " + std::to_string(id) + describe(work.rejection) +
           (work.sample ? " labels " + std::to_string(work.sample->supervised_targets) : "");
  }
  if (m.match_elements<admit_atom, Joined>()) return "admit " + describe(m.get_as<Joined>(1));
  if (m.match_elements<restore_atom, Joined, std::uint32_t>())
    return "restore " + describe(m.get_as<Joined>(1)) + " age " +
           std::to_string(m.get_as<std::uint32_t>(2));
  if (m.match_elements<close_atom, std::uint64_t, bool, std::uint64_t>())
    return "close round " + std::to_string(m.get_as<std::uint64_t>(1)) +
           (m.get_as<bool>(2) ? " exhausted" : "") + " consumed " +
           std::to_string(m.get_as<std::uint64_t>(3));
  if (m.match_elements<want_atom, std::uint32_t>())
    return "want " + std::to_string(m.get_as<std::uint32_t>(1));
  if (m.match_elements<credit_atom, std::uint32_t>())
    return "credit " + std::to_string(m.get_as<std::uint32_t>(1));
  if (m.match_elements<primed_atom>()) return "primed";
  if (m.match_elements<open_atom, std::uint64_t>())
    return "open round " + std::to_string(m.get_as<std::uint64_t>(1));
  if (m.match_elements<emitted_atom, std::uint64_t>())
    return "emitted round " + std::to_string(m.get_as<std::uint64_t>(1));
  if (m.match_elements<round_end_atom, std::uint64_t>())
    return "round end " + std::to_string(m.get_as<std::uint64_t>(1));
  if (m.match_elements<epoch_end_atom, std::uint64_t>())
    return "epoch end after " + std::to_string(m.get_as<std::uint64_t>(1)) + " steps";
  if (m.match_elements<StepWork>()) {
    const auto& work = m.get_as<StepWork>(0);
    return "step " + std::to_string(work.info.step) + " of round " +
           std::to_string(work.info.round) +
           (work.info.idle ? std::string(" idle") : ": " + id_list(work.info.sample_ids));
  }
  return "unexpected " + caf::to_string(m);
}

std::string describe(const Proposal& proposal) {
  const char* state = proposal.state == RankState::active     ? "active"
                      : proposal.state == RankState::draining ? "draining"
                                                              : "done";
  return "propose round " + std::to_string(proposal.round) + " " + state + ", " +
         std::to_string(proposal.samples.size()) + " samples";
}

using never_atom = caf::atom_constant<caf::atom("never")>;

// Records every message it receives under `name`.
caf::behavior probe(caf::event_based_actor* self, std::string name, std::shared_ptr<Log> log) {
  self->set_default_handler(
      [name, log](caf::scheduled_actor*, caf::message_view& view) -> caf::result<caf::message> {
        (*log)[name].push_back(describe(view.copy_content_to_message()));
        return caf::message{};
      });
  return {[](never_atom) {}};
}

// Plans each proposal as the only rank's, recording it.
coordinator_actor::behavior_type planning_coordinator(coordinator_actor::pointer,
                                                      BatchingConfig config,
                                                      std::shared_ptr<Log> log) {
  return {[=](propose_atom, const Proposal& proposal) -> RoundPlan {
    (*log)["coordinator"].push_back(describe(proposal));
    return plan_round(std::span(&proposal, 1), config, proposal.epoch, proposal.round);
  }};
}

caf::actor_system_config& deterministic(caf::actor_system_config& config) {
  config.set("scheduler.policy", caf::atom("testing"));
  config.set("logger.file-verbosity", caf::atom("quiet"));
  return config;
}

}  // namespace

ActorTestBench::ActorTestBench(PipelineConfig config, std::vector<SampleId> shard, EpochStart start,
                               const StageRegistry& stages,
                               std::shared_ptr<const DatasetIndex> index)
    : system_(deterministic(system_config_)),
      scheduler_(dynamic_cast<caf::scheduler::test_coordinator&>(system_.scheduler())),
      group_(InprocGroup::create(1)),
      collective_(group_->member(0)),
      queue_(std::make_shared<BatchQueue>(64)),
      log_(std::make_shared<Log>()) {
  // Whatever a test leaves running is stopped with the epoch; nothing may keep the system alive.
  system_.await_actors_before_shutdown(false);
  auto resources = std::make_shared<PipelineResources>();
  resources->config = std::move(config);
  resources->stages = make_user_stages(resources->config, stages, stats_);
  resources->index = std::move(index);
  resources->image_buffers = std::make_shared<ImageBufferPool>(16, std::size_t{16} << 20);
  ShardSequence sequence;
  sequence.append_ids(std::move(shard));
  context_ =
      std::make_shared<EpochContext>(resources, 0, std::move(sequence), std::move(start), queue_,
                                     stats_, nullptr, *collective_, nullptr, nullptr);
  auto& w = context_->wiring();
  const auto probe_for = [&](const char* name) { return system_.spawn(probe, name, log_); };
  w.reader = caf::actor_cast<reader_actor>(probe_for("reader"));
  w.joiner = caf::actor_cast<joiner_actor>(probe_for("joiner"));
  w.packer = caf::actor_cast<packer_actor>(probe_for("packer"));
  w.aligner = caf::actor_cast<aligner_actor>(probe_for("aligner"));
  w.emitter = caf::actor_cast<emitter_actor>(probe_for("emitter"));
  w.coordinator = system_.spawn(planning_coordinator, context_->config().batching, log_);
  for (const auto& stage : context_->resources().stages.record)
    w.record_stages.push_back(
        {caf::actor_cast<record_stage_dispatcher_actor>(probe_for(stage.config.name.c_str())), {}});
  for (const auto& stage : context_->resources().stages.sample)
    w.sample_stages.push_back(
        {caf::actor_cast<sample_stage_dispatcher_actor>(probe_for(stage.config.name.c_str())), {}});
}

ActorTestBench::~ActorTestBench() {
  context_->stop_actors();
  run();
}

void ActorTestBench::run() {
  scheduler_.run();
}

std::vector<std::string> ActorTestBench::received(const std::string& actor) {
  auto lines = std::move((*log_)[actor]);
  (*log_)[actor].clear();
  return lines;
}

std::shared_ptr<SamplePayload> sample_of(SampleId id, std::uint32_t tokens) {
  auto sample = std::make_shared<SamplePayload>();
  sample->id = id;
  sample->input_ids.assign(tokens, 7);
  sample->labels.assign(tokens, 7);
  sample->labels.front() = -100;
  sample->supervised_targets = tokens - 1;
  return sample;
}

}  // namespace odbatch::actors::test
