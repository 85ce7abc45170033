#include "odbatch/core/round_admission.hpp"
#include "odbatch/core/screening.hpp"
#include "odbatch/core/warmup.hpp"
#include "round_actors.hpp"

namespace odbatch::actors {

struct PackerState {
  EpochContextPtr context;
  RoundAdmission admission{0};
  std::uint64_t round = 0;
  std::uint32_t requested = 0;  // accepted samples asked of the joiner, not yet received
  // A resumed epoch's first samples go back into the window, not through admission.
  std::uint32_t to_restore = 0;
  std::uint32_t restored = 0;
};

namespace {

void request_more(packer_actor::stateful_pointer<PackerState> self) {
  auto& s = self->state;
  const std::uint32_t wanted = s.admission.still_wanted();
  if (wanted > s.requested) {
    self->send(s.context->wiring().joiner, want_atom::value, wanted - s.requested);
    s.requested = wanted;
  }
}

void close_round(packer_actor::stateful_pointer<PackerState> self) {
  auto& s = self->state;
  self->send(s.context->wiring().aligner, close_atom::value, s.round, s.admission.exhausted(),
             s.admission.consumed());
}

void close_if_admitted(packer_actor::stateful_pointer<PackerState> self) {
  auto& s = self->state;
  if (s.admission.wants_more()) return request_more(self);
  close_round(self);
}

// The replayed round's window is the restored samples alone: it closes once they are back.
void restore(packer_actor::stateful_pointer<PackerState> self, const Joined& joined) {
  auto& s = self->state;
  if (!joined.sample) {
    const auto& rejection = *joined.rejection;
    return s.context->fail("cannot resume: sample " + std::to_string(rejection.id) +
                           " of the checkpoint's window is now rejected (" + rejection.reason +
                           "): " + rejection.detail + "; has the dataset changed?");
  }
  --s.requested;
  const auto age = s.context->start().restored_ages[s.restored++];
  self->send(s.context->wiring().aligner, restore_atom::value, joined, age);
  if (s.restored == s.to_restore) close_round(self);
}

void open_round(packer_actor::stateful_pointer<PackerState> self, std::uint64_t round) {
  auto& s = self->state;
  s.round = round;
  s.admission.begin_round(admission_threshold(s.context->config().batching, round));
  close_if_admitted(self);
}

// The batching policies' last word on a preprocessed sample (the tokenizer already truncated).
// The detail starts with the record's "file:line", as every other stage's rejections do.
std::optional<Rejection> screen(const SamplePayload& sample, const EpochContext& context) {
  const auto verdict = screen_sample(sample.cost(), context.config().batching);
  if (verdict.verdict == Screening::Verdict::accept) return std::nullopt;
  const auto reason =
      verdict.verdict == Screening::Verdict::truncate ? RejectReason::over_length : verdict.reason;
  return Rejection{sample.id, std::string(to_string(reason)),
                   context.resources().index->describe(sample.id) + ": sample of " +
                       std::to_string(sample.input_ids.size()) + " tokens, " +
                       std::to_string(sample.cost().patches) + " patches"};
}

}  // namespace

packer_actor::behavior_type packer_behavior(packer_actor::stateful_pointer<PackerState> self,
                                            EpochContextPtr context) {
  report_exceptions_to(self, context, "packer");
  self->state.context = context;
  self->state.to_restore = static_cast<std::uint32_t>(context->start().restored_ages.size());
  self->state.admission = RoundAdmission(context->shard().size() - self->state.to_restore);
  return {
      [=](start_atom) {
        auto& s = self->state;
        if (s.to_restore == 0) return open_round(self, s.context->start().round);
        s.round = s.context->start().round;
        s.requested = s.to_restore;
        self->send(s.context->wiring().joiner, want_atom::value, s.to_restore);
      },
      [=](open_atom, std::uint64_t round) { open_round(self, round); },
      [=](const Joined& joined) {
        auto& s = self->state;
        if (s.restored < s.to_restore) return restore(self, joined);
        std::optional<Rejection> rejection = joined.rejection;
        if (joined.sample) {
          --s.requested;
          StageTimer timer(s.context->stats().packer);
          if (!rejection) rejection = screen(*joined.sample, *s.context);
        }
        if (rejection) {
          s.admission.count_rejected();
          s.context->reject(*rejection);
        } else {
          s.admission.count_accepted();
          self->send(s.context->wiring().aligner, admit_atom::value, joined);
        }
        close_if_admitted(self);
      },
  };
}

packer_actor spawn_packer(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn(packer_behavior, std::move(context));
}

}  // namespace odbatch::actors
