#pragma once
// When a rank proposes its next round. Three stages report to the aligner, in any order: the
// packer that a round's admission is over, the joiner that the lookahead behind the first round
// is ready, and the emitter that the previous round's batches are all in the batch queue. A round
// is proposed once all of that holds for it and no plan is awaited, one round at a time, until a
// plan ends the epoch.
#include <cstdint>
#include <optional>

namespace odbatch {

class ProposalGate {
 public:
  // Proposals start at `first_round`. `primed` when nothing will prime the first round (an
  // empty shard: the joiner never sees a sample).
  ProposalGate(std::uint64_t first_round, bool primed) : round_(first_round), primed_(primed) {}

  // The packer closed `round`'s admission (the next round may close while this one is still
  // being planned; it waits its turn).
  void admitted(std::uint64_t round) { admitted_ = round; }
  // The joiner's lookahead behind the first round is ready (it gates the first round only).
  void primed() { primed_ = true; }
  // The previous round's batches are all queued.
  void emitted() { previous_emitted_ = true; }

  // Whether round() may be proposed now.
  bool ready() const {
    return !epoch_over_ && !awaiting_plan_ && admitted_ == round_ && previous_emitted_ && primed_;
  }
  std::uint64_t round() const { return round_; }

  // round() was proposed: its plan is awaited, and its batches are to be queued before the next.
  void proposed() {
    awaiting_plan_ = true;
    previous_emitted_ = false;
  }
  // The plan of round() arrived: the next round is the one to propose, unless the epoch is over.
  void planned(bool epoch_over) {
    awaiting_plan_ = false;
    epoch_over_ = epoch_over;
    ++round_;
  }

 private:
  std::uint64_t round_;
  std::optional<std::uint64_t> admitted_;
  bool primed_;
  bool previous_emitted_ = true;
  bool awaiting_plan_ = false;
  bool epoch_over_ = false;
};

}  // namespace odbatch
