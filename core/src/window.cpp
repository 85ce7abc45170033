#include "odbatch/core/window.hpp"

namespace odbatch {

void RankWindow::admit(const SampleCost& sample) {
  samples_.push_back(WindowSample{sample, 0});
  ++entered_;
}

void RankWindow::restore(const SampleCost& sample, std::uint32_t age) {
  samples_.push_back(WindowSample{sample, age});
  if (age == 0) ++entered_;
}

void RankWindow::describe(Proposal& proposal) const {
  proposal.entered = entered_;
  proposal.samples.clear();
  proposal.samples.reserve(samples_.size());
  for (const auto& s : samples_)
    proposal.samples.push_back({s.cost.tokens, s.cost.labels, s.cost.patches, s.age});
}

void RankWindow::apply(const RoundPlan& plan, std::uint32_t rank, std::uint64_t first_step_in_epoch,
                       std::vector<EmittedStep>& out) {
  const RankPlan& rp = plan.ranks[rank];
  for (std::uint32_t step = 0; step < plan.steps; ++step) {
    EmittedStep e;
    e.round = plan.round;
    e.step_in_round = step;
    e.step_in_epoch = first_step_in_epoch + step;
    e.over_budget = rp.steps[step].over_budget;
    e.totals = plan.totals[step];
    e.loss_scale = rp.loss_scale[step];
    for (auto i : rp.group(step)) e.samples.push_back(samples_[i].cost);
    out.push_back(std::move(e));
  }
  std::vector<WindowSample> kept;
  kept.reserve(rp.deferred.size());
  for (auto i : rp.deferred) {
    kept.push_back(samples_[i]);
    ++kept.back().age;
  }
  samples_ = std::move(kept);
  entered_ = 0;
}

}  // namespace odbatch
