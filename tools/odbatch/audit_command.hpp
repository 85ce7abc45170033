#pragma once
// `odbatch audit`: checks the ledgers a run wrote (one per rank, see `odbatch run --ledger`) for
// identity coverage: every id of each epoch's shards emitted exactly once or rejected exactly
// once, nothing unknown, every rank present, and every rank yielding the same number of steps.
// Ledgers record sample ids only, so token budgets, per-step totals and loss scales are not
// checked here (`odbatch plan` audits those on scenarios).
#include <filesystem>
#include <optional>
#include <vector>

namespace odbatch::cli {

struct AuditOptions {
  std::vector<std::filesystem::path> ledgers;  // one per rank; each may hold several epochs
  // A pipeline TOML whose dataset, seed, shuffle and split the ledgers must match.
  std::optional<std::filesystem::path> config;
  std::optional<std::filesystem::path> json;  // the report as JSON
};

// Prints a summary per epoch and returns the exit status: 0 every check passed, 1 a problem was
// found, 2 a ledger or the config is unreadable or malformed (one line on stderr naming
// file:line).
int run_audit_command(const AuditOptions& options);

}  // namespace odbatch::cli
