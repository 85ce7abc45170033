#include "plan_report.hpp"

#include <algorithm>
#include <cstdio>

#include "odbatch/config/batching_settings.hpp"

namespace odbatch::cli {
namespace {

Report step_report(std::uint32_t step, const RankPlan& rank, const Proposal& proposal,
                   std::span<const SampleId> ids) {
  const StepGroup& group = rank.steps[step];
  Report indices = Report::array(), sample_ids = Report::array(), tokens = Report::array();
  for (const auto i : rank.group(step)) {
    indices.push_back(i);
    sample_ids.push_back(ids[i]);
    tokens.push_back(proposal.samples[i].tokens);
  }
  Report out;
  out["step"] = step;
  out["idle"] = group.idle();
  out["window_indices"] = std::move(indices);
  out["sample_ids"] = std::move(sample_ids);
  out["tokens"] = std::move(tokens);
  out["padded_tokens"] = std::uint64_t{group.count} * group.max_tokens;
  out["sum_tokens"] = group.sum_tokens;
  out["labels"] = group.sum_labels;
  out["patches"] = group.sum_patches;
  out["over_budget"] = group.over_budget;
  out["loss_scale"] = rank.loss_scale[step];
  return out;
}

Report proposal_report(const Proposal& proposal) {
  std::uint64_t tokens = 0;
  std::uint32_t oldest = 0;
  for (const auto& s : proposal.samples) {
    tokens += s.tokens;
    oldest = std::max(oldest, s.age);
  }
  Report out;
  out["window"] = proposal.samples.size();
  out["entered"] = proposal.entered;
  out["window_tokens"] = tokens;
  out["oldest_age"] = oldest;
  return out;
}

Report rank_round_report(std::uint32_t r, const RoundPlan& plan, const Proposal& proposal,
                         std::span<const SampleId> ids) {
  const RankPlan& rank = plan.ranks[r];
  Report steps = Report::array();
  for (std::uint32_t step = 0; step < plan.steps; ++step)
    steps.push_back(step_report(step, rank, proposal, ids));
  Report deferred_indices = Report::array(), deferred_ids = Report::array();
  for (const auto i : rank.deferred) {
    deferred_indices.push_back(i);
    deferred_ids.push_back(ids[i]);
  }
  Report out;
  out["rank"] = r;
  out["state"] = to_string(proposal.state);
  out["proposal"] = proposal_report(proposal);
  out["idle_steps"] = std::count_if(rank.steps.begin(), rank.steps.end(),
                                    [](const StepGroup& g) { return g.idle(); });
  out["steps"] = std::move(steps);
  out["deferred"] = {{"window_indices", std::move(deferred_indices)},
                     {"sample_ids", std::move(deferred_ids)}};
  return out;
}

}  // namespace

Report config_report(const BatchingConfig& config) {
  Report out = Report::object();
  for (const auto name : batching_setting_names()) {
    const SettingValue value = get_batching_setting(config, name);
    if (const auto* number = std::get_if<std::uint64_t>(&value))
      out[std::string(name)] = *number;
    else
      out[std::string(name)] = std::get<std::string>(value);
  }
  return out;
}

Report round_report(const RoundPlan& plan, std::span<const Proposal> proposals,
                    std::span<const std::vector<SampleId>> window_ids,
                    const BatchingConfig& config) {
  Report totals = Report::array();
  for (std::uint32_t step = 0; step < plan.steps; ++step) {
    const StepTotals& t = plan.totals[step];
    totals.push_back(
        {{"step", step}, {"samples", t.samples}, {"tokens", t.tokens}, {"labels", t.labels}});
  }
  Report ranks = Report::array();
  for (std::uint32_t r = 0; r < plan.ranks.size(); ++r)
    ranks.push_back(rank_round_report(r, plan, proposals[r], window_ids[r]));
  Report out;
  out["round"] = plan.round;
  out["steps"] = plan.steps;
  out["epoch_over"] = plan.epoch_over;
  out["digest"] = hex_digest(plan.digest);
  // Step i holds every rank's step_cost_rank[i]-th costliest group: ranks pair by cost.
  out["step_cost_rank"] = step_permutation(config.seed, plan.epoch, plan.round, plan.steps);
  out["totals"] = std::move(totals);
  out["ranks"] = std::move(ranks);
  return out;
}

Report rank_totals_report(std::uint32_t rank, std::size_t shard_samples, const RankLedger& ledger) {
  std::uint64_t idle = 0, emitted = 0, tokens = 0, padded = 0;
  for (const auto& step : ledger.steps) {
    if (step.idle()) ++idle;
    std::uint64_t longest = 0;
    for (const auto& s : step.samples) {
      tokens += s.tokens;
      longest = std::max<std::uint64_t>(longest, s.tokens);
    }
    emitted += step.samples.size();
    padded += longest * step.samples.size();
  }
  Report rejected = Report::array();
  for (const auto& r : ledger.rejected)
    rejected.push_back({{"id", r.id}, {"reason", r.reason}, {"detail", r.detail}});
  Report out;
  out["rank"] = rank;
  out["shard_samples"] = shard_samples;
  out["steps"] = ledger.steps.size();
  out["idle_steps"] = idle;
  out["emitted"] = emitted;
  out["tokens"] = tokens;
  out["padded_tokens"] = padded;
  out["padding_efficiency"] =
      padded == 0 ? Report(nullptr)
                  : Report(static_cast<double>(tokens) / static_cast<double>(padded));
  out["rejected"] = std::move(rejected);
  return out;
}

Report audit_report(const AuditReport& audit) {
  Report findings = Report::array();
  for (const auto& f : audit.findings)
    findings.push_back({{"kind", std::string(to_string(f.kind))}, {"message", f.message}});
  const std::string summary = audit.summary();
  Report out;
  out["ok"] = audit.ok();
  out["summary"] = summary.substr(0, summary.find('\n'));
  out["problems"] = audit.problems;
  out["expected"] = audit.expected;
  out["emitted"] = audit.emitted;
  out["rejected"] = audit.rejected;
  out["steps_per_rank"] = audit.steps;
  out["findings"] = std::move(findings);
  return out;
}

}  // namespace odbatch::cli
