#include "odbatch/core/ledger.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "odbatch/core/loss_scale.hpp"

namespace odbatch {
namespace {

class Findings {
 public:
  explicit Findings(AuditReport& report) : report_(report) {}
  void add(AuditFinding::Kind kind, std::string message) {
    ++report_.problems;
    if (report_.findings.size() < AuditReport::kMaxFindings)
      report_.findings.push_back({kind, std::move(message)});
  }

 private:
  AuditReport& report_;
};

std::string where(std::size_t rank, const EmittedStep& s) {
  return "rank " + std::to_string(rank) + " step " + std::to_string(s.step_in_epoch) + " (round " +
         std::to_string(s.round) + ")";
}

void check_coverage(std::span<const SampleId> expected_ids, std::span<const RankLedger> ranks,
                    AuditScope scope, AuditReport& report, Findings& findings) {
  using K = AuditFinding::Kind;
  std::vector<SampleId> expected(expected_ids.begin(), expected_ids.end());
  std::sort(expected.begin(), expected.end());
  for (std::size_t i = 1; i < expected.size(); ++i)
    if (expected[i] == expected[i - 1])
      findings.add(K::duplicated, "id " + std::to_string(expected[i]) + " expected twice");
  // (id, rank, emitted?) for every emission and rejection.
  struct Seen {
    SampleId id;
    std::uint32_t rank;
    bool emitted;
  };
  std::vector<Seen> seen;
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    for (const auto& step : ranks[r].steps)
      for (const auto& s : step.samples) seen.push_back({s.id, r, true});
    for (const auto& rej : ranks[r].rejected) seen.push_back({rej.id, r, false});
    report.rejected += ranks[r].rejected.size();
  }
  report.emitted = seen.size() - report.rejected;
  std::sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.id < b.id; });
  const auto not_seen = [&](SampleId id) {
    if (scope == AuditScope::until_departure)
      ++report.not_reached;
    else
      findings.add(K::missing, "id " + std::to_string(id) + " neither emitted nor rejected");
  };
  auto describe = [](const Seen& s) {
    return std::string(s.emitted ? "emitted" : "rejected") + " on rank " + std::to_string(s.rank);
  };
  std::size_t e = 0;
  for (std::size_t i = 0; i < seen.size();) {
    std::size_t j = i;
    while (j < seen.size() && seen[j].id == seen[i].id) ++j;
    const SampleId id = seen[i].id;
    while (e < expected.size() && expected[e] < id) not_seen(expected[e++]);
    if (e < expected.size() && expected[e] == id) {
      ++e;
      if (j - i > 1)
        findings.add(K::duplicated, "id " + std::to_string(id) + " " + describe(seen[i]) + " and " +
                                        describe(seen[i + 1]));
    } else {
      findings.add(K::unknown, "id " + std::to_string(id) + " " + describe(seen[i]) +
                                   " is not part of the epoch");
    }
    i = j;
  }
  for (; e < expected.size(); ++e) not_seen(expected[e]);
}

void check_budget(std::size_t rank, const EmittedStep& step, const BatchingConfig& c,
                  Findings& findings) {
  std::uint64_t max_tokens = 0, sum_tokens = 0, sum_patches = 0;
  for (const auto& s : step.samples) {
    max_tokens = std::max<std::uint64_t>(max_tokens, s.tokens);
    sum_tokens += s.tokens;
    sum_patches += s.patches;
  }
  const std::uint64_t used =
      c.budget_mode == BudgetMode::padded ? max_tokens * step.samples.size() : sum_tokens;
  const bool within =
      used <= c.token_budget && (c.patch_budget == 0 || sum_patches <= c.patch_budget);
  if (within || (step.samples.size() == 1 && step.over_budget)) return;
  findings.add(AuditFinding::Kind::over_budget,
               where(rank, step) + ": " + std::to_string(step.samples.size()) + " samples use " +
                   std::to_string(used) + " of " + std::to_string(c.token_budget) +
                   " budget tokens and " + std::to_string(sum_patches) + " patches");
}

// Every rank's view of the step's totals must equal the sum of what the ranks actually emitted,
// and the loss scales must follow from those totals and sum to W.
void check_step_agreement(std::span<const RankLedger> ranks, std::size_t step,
                          const BatchingConfig& c, Findings& findings) {
  using K = AuditFinding::Kind;
  const auto world = static_cast<std::uint32_t>(ranks.size());
  StepTotals actual;
  std::vector<StepGroup> local(world);
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto& e = ranks[r].steps[step];
    local[r].count = static_cast<std::uint32_t>(e.samples.size());
    for (const auto& s : e.samples) {
      local[r].sum_tokens += s.tokens;
      local[r].sum_labels += s.labels;
    }
    actual.samples += local[r].count;
    actual.tokens += local[r].sum_tokens;
    actual.labels += local[r].sum_labels;
  }
  double scale_sum = 0.0;
  for (std::uint32_t r = 0; r < world; ++r) {
    const auto& e = ranks[r].steps[step];
    if (!(e.totals == actual))
      findings.add(K::totals_mismatch,
                   where(r, e) + ": sees totals samples=" + std::to_string(e.totals.samples) +
                       " tokens=" + std::to_string(e.totals.tokens) +
                       " labels=" + std::to_string(e.totals.labels) + ", actual samples=" +
                       std::to_string(actual.samples) + " tokens=" + std::to_string(actual.tokens) +
                       " labels=" + std::to_string(actual.labels));
    const double want = loss_scale(c.loss_scaling, world, local[r], actual);
    if (std::abs(e.loss_scale - want) > 1e-9 * std::max(1.0, want))
      findings.add(K::loss_scale_mismatch, where(r, e) + ": loss scale " +
                                               std::to_string(e.loss_scale) + ", expected " +
                                               std::to_string(want));
    scale_sum += e.loss_scale;
  }
  const bool has_denominator = [&] {
    switch (c.loss_scaling) {
      case LossScaling::none:
        return false;  // scale 1 per non-IDLE rank; nothing to sum
      case LossScaling::samples:
        return actual.samples > 0;
      case LossScaling::tokens:
        return actual.tokens > 0;
      case LossScaling::labels:
        return actual.labels > 0;
    }
    return false;
  }();
  if (has_denominator && std::abs(scale_sum - world) > 1e-9 * world)
    findings.add(K::loss_scale_mismatch, "step " + std::to_string(step) + ": loss scales sum to " +
                                             std::to_string(scale_sum) + ", not " +
                                             std::to_string(world));
}

}  // namespace

std::string_view to_string(AuditFinding::Kind kind) {
  using K = AuditFinding::Kind;
  switch (kind) {
    case K::missing:
      return "missing";
    case K::duplicated:
      return "duplicated";
    case K::unknown:
      return "unknown";
    case K::step_count_mismatch:
      return "step_count_mismatch";
    case K::over_budget:
      return "over_budget";
    case K::totals_mismatch:
      return "totals_mismatch";
    case K::loss_scale_mismatch:
      return "loss_scale_mismatch";
  }
  return "?";
}

std::string AuditReport::summary() const {
  std::ostringstream out;
  out << (ok() ? "audit passed" : "audit FAILED") << ": " << expected << " expected, " << emitted
      << " emitted, " << rejected << " rejected, ";
  if (not_reached > 0) out << not_reached << " not reached (the ranks departed), ";
  out << steps << " steps per rank, " << problems << " problems";
  for (const auto& f : findings) out << "\n  " << to_string(f.kind) << ": " << f.message;
  if (problems > findings.size()) out << "\n  ... " << problems - findings.size() << " more";
  return out.str();
}

AuditReport audit_epoch(std::span<const SampleId> expected_ids, std::span<const RankLedger> ranks,
                        const BatchingConfig& config, AuditScope scope) {
  AuditReport report;
  Findings findings(report);
  report.expected = expected_ids.size();
  check_coverage(expected_ids, ranks, scope, report, findings);

  std::size_t common_steps = ranks.empty() ? 0 : ranks[0].steps.size();
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].steps.size() != ranks[0].steps.size())
      findings.add(AuditFinding::Kind::step_count_mismatch,
                   "rank " + std::to_string(r) + " yielded " +
                       std::to_string(ranks[r].steps.size()) + " steps, rank 0 yielded " +
                       std::to_string(ranks[0].steps.size()));
    common_steps = std::min(common_steps, ranks[r].steps.size());
  }
  report.steps = common_steps;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (const auto& step : ranks[r].steps) check_budget(r, step, config, findings);
  for (std::size_t step = 0; step < common_steps; ++step)
    check_step_agreement(ranks, step, config, findings);
  return report;
}

}  // namespace odbatch
