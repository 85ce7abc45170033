#pragma once
// One rank's window: the samples admitted and not yet emitted, with their ages, in window order.
// The rank builds its proposal from it and applies each round's plan to it.
#include <cstdint>
#include <span>
#include <vector>

#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

// A step as a rank emits it: the samples of its group (empty when IDLE) and the step's metadata.
struct EmittedStep {
  std::uint64_t round = 0;
  std::uint32_t step_in_round = 0;
  std::uint64_t step_in_epoch = 0;
  std::vector<SampleCost> samples;  // in group order; empty for IDLE
  bool over_budget = false;
  StepTotals totals;
  double loss_scale = 0.0;

  bool idle() const { return samples.empty(); }
};

class RankWindow {
 public:
  // Appends an admitted sample (age 0).
  void admit(const SampleCost& sample);
  // Appends a sample a checkpoint names, with the age it had: deferred samples (age > 0) come
  // first, then those the round admitted (age 0, counted as entered).
  void restore(const SampleCost& sample, std::uint32_t age);

  std::size_t size() const { return samples_.size(); }
  bool empty() const { return samples_.empty(); }
  std::span<const WindowSample> samples() const { return samples_; }
  std::uint32_t entered_since_last_round() const { return entered_; }

  // Fills the proposal's `entered` count and samples from the window.
  void describe(Proposal& proposal) const;

  // Emits this rank's steps of `plan` (appended to `out`, numbered from `first_step_in_epoch`),
  // removes the emitted samples and ages the deferred ones.
  void apply(const RoundPlan& plan, std::uint32_t rank, std::uint64_t first_step_in_epoch,
             std::vector<EmittedStep>& out);

 private:
  std::vector<WindowSample> samples_;
  std::uint32_t entered_ = 0;
};

}  // namespace odbatch
