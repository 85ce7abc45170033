#include "odbatch/core/proposal_gate.hpp"
#include "odbatch/core/window.hpp"
#include "round_actors.hpp"

namespace odbatch::actors {

struct AlignerState {
  EpochContextPtr context;
  RankWindow window;
  std::vector<std::shared_ptr<const SamplePayload>> payloads;  // parallel to the window
  std::vector<std::shared_ptr<const SamplePayload>> incoming;  // admitted for the open round
  ProposalGate gate{0, false};
  // As of the last round the packer closed: whether the shard is exhausted, and how many of its
  // records the admission has consumed.
  bool exhausted = false;
  std::uint64_t consumed = 0;
  std::uint64_t steps = 0;
  std::uint64_t global_samples = 0;
  std::uint64_t global_tokens = 0;
  std::uint64_t first_step_to_emit = 0;  // a resumed epoch replays its first round from here
  RoundRecord proposed;                  // the round awaiting its plan, as a checkpoint needs it
  std::vector<EmittedStep> scratch;
};

namespace {

void apply_plan(aligner_actor::stateful_pointer<AlignerState> self, const RoundPlan& plan) {
  auto& s = self->state;
  auto& context = *s.context;
  const std::uint32_t rank = context.resources().rank;
  const RankPlan& mine = plan.ranks[rank];
  {
    StageTimer timer(context.stats().aligner);
    s.proposed.steps = plan.steps;
    s.proposed.emitted_at.assign(s.payloads.size(), RoundRecord::kDeferred);
    for (std::uint32_t step = 0; step < plan.steps; ++step)
      for (auto index : mine.group(step)) s.proposed.emitted_at[index] = step;
    const auto record = std::make_shared<const RoundRecord>(std::move(s.proposed));
    for (std::uint32_t step = 0; step < plan.steps; ++step) {
      StepWork work;
      work.round = record;
      StepInfo& info = work.info;
      const StepGroup& group = mine.steps[step];
      info.epoch = context.epoch();
      info.step = s.steps + step;
      info.round = plan.round;
      info.idle = group.idle();
      info.over_budget = group.over_budget;
      info.loss_scale = mine.loss_scale[step];
      info.samples = group.count;
      info.tokens = group.sum_tokens;
      info.labels = group.sum_labels;
      info.global = plan.totals[step];
      s.global_samples += info.global.samples;
      s.global_tokens += info.global.tokens;
      info.global_samples_consumed = s.global_samples;
      info.global_tokens_consumed = s.global_tokens;
      for (auto index : mine.group(step)) {
        const auto& sample = s.payloads[index];
        work.rows.push_back(sample);
        info.sample_ids.push_back(sample->id);
        info.source_files.push_back(sample->source_file);
      }
      // Steps the trainer took before the checkpoint this epoch resumed from.
      if (info.step < s.first_step_to_emit) continue;
      if (auto* ledger = context.ledger())
        ledger->step(context.epoch(), info.step, plan.round, info.idle, info.sample_ids);
      self->send(context.wiring().emitter, std::move(work));
    }
    // The deferred samples stay, in window order, one round older.
    std::vector<std::shared_ptr<const SamplePayload>> kept;
    kept.reserve(mine.deferred.size());
    for (auto index : mine.deferred) kept.push_back(std::move(s.payloads[index]));
    s.payloads = std::move(kept);
    s.scratch.clear();
    s.window.apply(plan, rank, s.steps, s.scratch);
  }
  s.steps += plan.steps;
  s.gate.planned(plan.epoch_over);
  self->send(context.wiring().emitter, round_end_atom::value, plan.round);
  if (plan.epoch_over) self->send(context.wiring().emitter, epoch_end_atom::value, s.steps);
}

void try_propose(aligner_actor::stateful_pointer<AlignerState> self) {
  auto& s = self->state;
  if (!s.gate.ready()) return;
  const auto round = s.gate.round();
  auto& context = *s.context;
  Proposal proposal;
  {
    StageTimer timer(context.stats().aligner);
    for (auto& sample : s.incoming) {
      s.window.admit(sample->cost());
      s.payloads.push_back(std::move(sample));
    }
    s.incoming.clear();
    proposal.epoch = context.epoch();
    proposal.round = round;
    proposal.state = !s.exhausted       ? RankState::active
                     : s.window.empty() ? RankState::done
                                        : RankState::draining;
    s.window.describe(proposal);
    RoundRecord& record = s.proposed;
    record = RoundRecord{};
    record.round = round;
    record.first_step = s.steps;
    record.cursor = context.start().cursor + s.consumed;
    record.before = {s.global_samples, s.global_tokens};
    record.window.reserve(s.payloads.size());
    const auto window = s.window.samples();
    for (std::size_t i = 0; i < window.size(); ++i)
      record.window.push_back({s.payloads[i]->id, window[i].age, false});
  }
  s.gate.proposed();
  // The next round's admission overlaps this round's planning and emission.
  self->send(context.wiring().packer, open_atom::value, round + 1);
  self->request(context.wiring().coordinator, caf::infinite, propose_atom::value,
                std::move(proposal))
      .then([=](const RoundPlan& plan) { apply_plan(self, plan); },
            [=](caf::error& error) {
              self->state.context->fail("coordinator: " + self->system().render(error));
            });
}

}  // namespace

aligner_actor::behavior_type aligner_behavior(aligner_actor::stateful_pointer<AlignerState> self,
                                              EpochContextPtr context) {
  report_exceptions_to(self, context, "aligner");
  self->state.context = context;
  const auto& start = context->start();
  self->state.steps = start.round_first_step;
  self->state.global_samples = start.before_round.samples;
  self->state.global_tokens = start.before_round.tokens;
  self->state.first_step_to_emit = start.steps_taken;
  // An empty shard sends the joiner nothing, so nothing would ever prime the first round.
  self->state.gate = ProposalGate(start.round, context->shard().size() == 0);
  return {
      [=](admit_atom, const Joined& joined) { self->state.incoming.push_back(joined.sample); },
      [=](restore_atom, const Joined& joined, std::uint32_t age) {
        auto& s = self->state;
        s.window.restore(joined.sample->cost(), age);
        s.payloads.push_back(joined.sample);
      },
      [=](close_atom, std::uint64_t round, bool exhausted, std::uint64_t consumed) {
        self->state.gate.admitted(round);
        self->state.exhausted = exhausted;
        self->state.consumed = consumed;
        try_propose(self);
      },
      [=](primed_atom) {
        self->state.gate.primed();
        try_propose(self);
      },
      [=](emitted_atom, std::uint64_t) {
        self->state.gate.emitted();
        try_propose(self);
      },
  };
}

aligner_actor spawn_aligner(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn(aligner_behavior, std::move(context));
}

}  // namespace odbatch::actors
