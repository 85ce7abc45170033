#pragma once
// The epoch audit: given what every rank emitted and rejected, check identity coverage, equal
// step counts, budgets and agreement of totals and loss scales.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/rejection.hpp"
#include "odbatch/core/window.hpp"

namespace odbatch {

struct RankLedger {
  std::vector<EmittedStep> steps;
  std::vector<Rejection> rejected;
};

struct AuditFinding {
  enum class Kind : std::uint8_t {
    missing,              // an expected id neither emitted nor rejected
    duplicated,           // emitted or rejected more than once
    unknown,              // emitted or rejected but not part of the epoch
    step_count_mismatch,  // ranks yielded different numbers of steps
    over_budget,          // a group breaks the budget without being a flagged singleton
    totals_mismatch,      // a rank's view of a step's global totals is wrong
    loss_scale_mismatch,  // a loss scale differs from its definition, or they do not sum to W
  };
  Kind kind;
  std::string message;
};

std::string_view to_string(AuditFinding::Kind kind);

struct AuditReport {
  std::vector<AuditFinding> findings;  // the first `kMaxFindings` problems
  std::uint64_t problems = 0;          // all problems, including those not listed
  std::uint64_t expected = 0;
  std::uint64_t emitted = 0;
  std::uint64_t rejected = 0;
  std::uint64_t not_reached = 0;  // under AuditScope::until_departure: neither emitted nor rejected
  std::uint64_t steps = 0;        // per rank, when they agree

  static constexpr std::size_t kMaxFindings = 64;
  bool ok() const { return problems == 0; }
  std::string summary() const;
};

// What the ids of an epoch must show: each emitted or rejected exactly once (the whole epoch), or,
// for an epoch that every rank left at an agreed step (its ledgers cut there), none twice and none
// foreign, the others counted as not reached.
enum class AuditScope : std::uint8_t { whole_epoch, until_departure };

AuditReport audit_epoch(std::span<const SampleId> expected_ids, std::span<const RankLedger> ranks,
                        const BatchingConfig& config, AuditScope scope = AuditScope::whole_epoch);

}  // namespace odbatch
