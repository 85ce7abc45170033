#pragma once
// The `odbatch plan` report: round plans explained per rank and step, per-rank epoch totals and
// the epoch audit, as JSON (format in docs/plan-json.md).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "json_output.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/core/hex_digest.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch::cli {

// Every batching setting by name.
Report config_report(const BatchingConfig& config);

// One round: T, the step order, per-step totals and, per rank, its proposal, its steps (window
// indices, sample ids, costs, loss scale) and its deferred samples. `window_ids[r]` holds rank
// r's sample ids in window order.
Report round_report(const RoundPlan& plan, std::span<const Proposal> proposals,
                    std::span<const std::vector<SampleId>> window_ids,
                    const BatchingConfig& config);

// A rank's epoch: steps, IDLE steps, emitted samples, tokens and padding, rejections with reasons.
Report rank_totals_report(std::uint32_t rank, std::size_t shard_samples, const RankLedger& ledger);

Report audit_report(const AuditReport& audit);

}  // namespace odbatch::cli
