#include "joiner.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pooled_pixels.hpp"

namespace odbatch::actors {

namespace {

struct PendingSample {
  std::optional<SampleStart> start;  // until the reader's announcement arrives
  std::uint32_t parts_arrived = 0;
  std::shared_ptr<SamplePayload> sample;  // from the tokenizer
  std::vector<std::shared_ptr<DecodedImage>> images;
  std::optional<Rejection> rejection;
  // With sample stages: the sample went to them (assembled), and is back.
  bool staging = false;
  bool staged = false;
  std::optional<Joined> joined;  // assembled, and through the sample stages when there are any

  bool complete() const { return start && parts_arrived == start->parts; }
  // Whether it can leave the joiner: complete, and back from the sample stages if it went there.
  bool ready() const { return complete() && (!staging || staged); }
};

}  // namespace

struct JoinerState {
  EpochContextPtr context;
  std::unordered_map<std::uint64_t, PendingSample> pending;
  std::uint64_t next_out = 0;
  std::uint32_t wanted = 0;
  // Priming: once the first round's samples are out, the joiner tells the aligner when the
  // lookahead is ready (`ready_end`: the first shard position not yet complete).
  bool asked = false;
  bool primed = false;
  std::uint64_t ready_end = 0;
};

namespace {

void note_rejection(PendingSample& p, const std::optional<Rejection>& rejection) {
  if (rejection && !p.rejection) p.rejection = rejection;
}

Joined assemble(PendingSample& p, const std::shared_ptr<ImageBufferPool>& image_buffers) {
  Joined joined;
  if (!p.rejection && p.start->rejection) p.rejection = p.start->rejection;
  if (p.rejection) {
    joined.rejection = std::move(p.rejection);
    return joined;
  }
  auto& sample = *p.sample;
  sample.source_file = p.start->source_file;
  sample.line = p.start->line;
  if (p.images.empty()) {
    joined.sample = std::move(p.sample);
    return joined;
  }
  sample.images.reserve(p.images.size());
  for (auto& image : p.images) sample.images.push_back(std::move(*image));
  joined.sample = pooled_sample(image_buffers, std::move(sample));
  return joined;
}

// A complete sample goes through the sample stages, when there are any, as soon as its parts
// are in (not in shard order: the stages work ahead of the packer's wishes, within the reader's
// credits); a rejected one goes straight to release.
void stage_if_complete(joiner_actor::stateful_pointer<JoinerState> self, std::uint64_t seq) {
  auto& s = self->state;
  const auto& pools = s.context->wiring().sample_stages;
  if (pools.empty()) return;
  auto& p = s.pending[seq];
  if (!p.complete() || p.staging || p.joined) return;
  Joined joined;
  {
    StageTimer timer(s.context->stats().joiner);
    joined = assemble(p, s.context->resources().image_buffers);
  }
  if (!joined.sample) {
    p.joined = std::move(joined);
    return;
  }
  p.staging = true;
  SampleWork work;
  work.seq = seq;
  work.source = source_of(s.context->resources().mix, joined.sample->id);
  // The only holder: the stages may change it before anyone else sees it.
  work.sample = std::const_pointer_cast<SamplePayload>(std::move(joined.sample));
  self->send(pools.front().dispatcher, std::move(work));
}

void release(joiner_actor::stateful_pointer<JoinerState> self) {
  auto& s = self->state;
  std::uint32_t released = 0;
  while (s.wanted > 0) {
    const auto it = s.pending.find(s.next_out);
    if (it == s.pending.end() || !it->second.ready()) break;
    Joined joined;
    if (it->second.joined) {
      joined = std::move(*it->second.joined);
    } else {
      StageTimer timer(s.context->stats().joiner);
      joined = assemble(it->second, s.context->resources().image_buffers);
    }
    const bool accepted = joined.sample != nullptr;
    self->send(s.context->wiring().packer, std::move(joined));
    if (accepted) --s.wanted;
    s.pending.erase(it);
    ++s.next_out;
    ++released;
  }
  if (released > 0) self->send(s.context->wiring().reader, credit_atom::value, released);
}

// The first round's batches wait for the lookahead (first_round_lookahead): without it, the second
// round would need all its new samples while the first round's steps hold only its good groups
// (about 60% of its admission on real data), and a trainer only a little slower than the pipeline
// would wait.
void prime_if_ready(joiner_actor::stateful_pointer<JoinerState> self) {
  auto& s = self->state;
  auto& context = *s.context;
  // A shard shorter than the first round's threshold leaves `wanted` above zero for good.
  const bool shard_released = s.next_out >= context.shard().size();
  if (s.primed || (!shard_released && (!s.asked || s.wanted > 0))) return;
  s.ready_end = std::max(s.ready_end, s.next_out);
  for (auto it = s.pending.find(s.ready_end); it != s.pending.end() && it->second.ready();
       it = s.pending.find(s.ready_end))
    ++s.ready_end;
  if (s.ready_end - s.next_out < first_round_lookahead(context.config(), context.start().round) &&
      s.ready_end < context.shard().size())
    return;
  s.primed = true;
  self->send(context.wiring().aligner, primed_atom::value);
}

}  // namespace

joiner_actor::behavior_type joiner_behavior(joiner_actor::stateful_pointer<JoinerState> self,
                                            EpochContextPtr context) {
  report_exceptions_to(self, context, "joiner");
  self->state.context = context;
  return {
      [=](const SampleStart& start) {
        auto& p = self->state.pending[start.seq];
        p.start = start;
        p.images.resize(start.parts > 0 ? start.parts - 1 : 0);
        stage_if_complete(self, start.seq);
        release(self);
        prime_if_ready(self);
      },
      [=](const TextDone& done) {
        auto& p = self->state.pending[done.seq];
        ++p.parts_arrived;
        note_rejection(p, done.rejection);
        if (done.sample) p.sample = done.sample;
        stage_if_complete(self, done.seq);
        release(self);
        prime_if_ready(self);
      },
      [=](const ImageDone& done) {
        auto& p = self->state.pending[done.seq];
        ++p.parts_arrived;
        note_rejection(p, done.rejection);
        if (done.decoded) {
          if (p.images.size() <= done.image) p.images.resize(done.image + 1);
          p.images[done.image] = done.decoded;
        }
        stage_if_complete(self, done.seq);
        release(self);
        prime_if_ready(self);
      },
      [=](SampleWork& work) {
        auto& p = self->state.pending[work.seq];
        p.staged = true;
        Joined joined;
        joined.sample = std::move(work.sample);
        joined.rejection = std::move(work.rejection);
        if (joined.rejection) joined.sample.reset();
        p.joined = std::move(joined);
        release(self);
        prime_if_ready(self);
      },
      [=](want_atom, std::uint32_t count) {
        self->state.wanted += count;
        self->state.asked = true;
        release(self);
        prime_if_ready(self);
      },
  };
}

joiner_actor spawn_joiner(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn(joiner_behavior, std::move(context));
}

}  // namespace odbatch::actors
