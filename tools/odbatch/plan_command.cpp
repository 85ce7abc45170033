#include "plan_command.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "json_input.hpp"
#include "json_output.hpp"
#include "odbatch/config/batching_config_toml.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/core/lockstep.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"
#include "plan_report.hpp"
#include "plan_summary.hpp"
#include "scenario.hpp"
#include "window_ids.hpp"

namespace odbatch::cli {
namespace {

struct PlanOutcome {
  Report report;
  std::string summary;
  std::string failure;  // why the exit status is 1; empty on success
};

Report report_header(std::string_view kind, const Scenario& scenario, const BatchingConfig& config,
                     std::uint64_t epoch, std::uint32_t world) {
  Report out = command_report("plan");
  out["kind"] = kind;
  if (!scenario.description.empty()) out["description"] = scenario.description;
  out["epoch"] = epoch;
  out["world_size"] = world;
  out["config"] = config_report(config);
  out["fingerprint"] = hex_digest(fingerprint(config, world));
  return out;
}

PlanOutcome plan_one_round(const Scenario& scenario, const RoundScenario& round,
                           const BatchingConfig& config, const std::string& source) {
  const auto world = static_cast<std::uint32_t>(round.proposals.size());
  std::vector<Proposal> proposals = round.proposals;
  for (auto& p : proposals) p.fingerprint = fingerprint(config, world);
  // Every proposal shares the scenario's header, so only the window checks can fail here.
  if (const auto d = check_proposals(proposals, proposals.front(), config))
    throw InputError(source + ": ranks[" + std::to_string(d->rank) + "]: invalid proposal (" +
                     d->field + "): " + d->message);
  const RoundPlan plan = plan_round(proposals, config, round.epoch, round.round);
  PlanOutcome outcome{report_header("round", scenario, config, round.epoch, world), {}, {}};
  outcome.report["rounds"] =
      Report::array({round_report(plan, proposals, round.window_ids, config)});
  const LockstepRound record{proposals, plan};
  outcome.summary = summarize_rounds(std::span(&record, 1), config);
  return outcome;
}

// Proposals travel as wire frames, as between processes: every receiving rank decodes every frame.
ProposalExchange wire_exchange(const BatchingConfig& config) {
  DecodeLimits limits;
  if (config.policy == Policy::balanced)
    limits.max_samples = config.window * (config.max_defer_rounds + 1);
  return [limits](std::uint32_t receiver, std::span<const Proposal> sent) {
    std::vector<Proposal> received(sent.size());
    for (std::size_t sender = 0; sender < sent.size(); ++sender) {
      const auto frame = encode_proposal(sent[sender]);
      if (const auto error = decode_proposal(frame, received[sender], limits))
        throw std::runtime_error("rank " + std::to_string(receiver) +
                                 " could not decode the proposal of rank " +
                                 std::to_string(sender) + ": " + error->message);
    }
    return received;
  };
}

PlanOutcome plan_epoch(const Scenario& scenario, const EpochScenario& epoch,
                       const BatchingConfig& config) {
  const LockstepScenario lockstep{config, epoch.epoch, epoch.shards};
  LockstepOptions options;
  options.exchange = wire_exchange(config);
  options.record_rounds = true;
  const LockstepResult result = run_lockstep(lockstep, options);
  const AuditReport audit = audit_epoch(result.expected_ids, result.ledgers, config);
  const WindowIds window_ids = replay_window_ids(lockstep, result);

  const auto world = static_cast<std::uint32_t>(epoch.shards.size());
  PlanOutcome outcome{report_header("epoch", scenario, config, epoch.epoch, world), {}, {}};
  outcome.summary = summarize_rounds(result.rounds, config) +
                    summarize_epoch(epoch.shards, result, audit, config);
  Report rounds = Report::array();
  for (std::size_t k = 0; k < result.rounds.size(); ++k)
    rounds.push_back(
        round_report(result.rounds[k].plan, result.rounds[k].proposals, window_ids[k], config));
  Report ranks = Report::array();
  for (std::uint32_t r = 0; r < world; ++r)
    ranks.push_back(rank_totals_report(r, epoch.shards[r].size(), result.ledgers[r]));
  Report& report = outcome.report;
  report["run"] = {{"rounds", result.rounds_run},
                   {"steps_per_rank", audit.steps},
                   {"finished", result.finished},
                   {"failure", result.failure}};
  report["audit"] = audit_report(audit);
  report["ranks"] = std::move(ranks);
  report["rounds"] = std::move(rounds);

  if (!result.failure.empty())
    outcome.failure = "epoch run failed: " + result.failure;
  else if (!audit.ok())
    outcome.failure = audit.summary().substr(0, audit.summary().find('\n'));
  return outcome;
}

void write_report(const Report& report, const std::optional<std::filesystem::path>& output) {
  const std::string text = to_readable_json(report);
  if (!output) {
    std::cout << text;
    return;
  }
  std::ofstream out(*output, std::ios::binary);
  if (!(out << text)) throw InputError(output->string() + ": cannot write the report");
}

}  // namespace

int run_plan_command(const PlanOptions& options) {
  try {
    const Scenario scenario = read_scenario(options.scenario);
    // Precedence: built-in defaults < scenario "config" < --config [batching] < --policy.
    BatchingConfig config = scenario.config;
    if (options.config_file) config = load_batching_config_toml(*options.config_file, config);
    if (options.policy) config.policy = *options.policy;

    const std::string source = options.scenario.string();
    const PlanOutcome outcome =
        std::holds_alternative<RoundScenario>(scenario.body)
            ? plan_one_round(scenario, std::get<RoundScenario>(scenario.body), config, source)
            : plan_epoch(scenario, std::get<EpochScenario>(scenario.body), config);
    if (options.summary) std::cout << outcome.summary;
    if (!options.summary || options.output) write_report(outcome.report, options.output);
    if (outcome.failure.empty()) return 0;
    std::cerr << "odbatch plan: " << outcome.failure << '\n';
    return 1;
  } catch (const InputError& e) {
    std::cerr << "odbatch plan: " << e.what() << '\n';
  } catch (const ConfigFileError& e) {
    std::cerr << "odbatch plan: " << e.what() << '\n';
  }
  return 2;
}

}  // namespace odbatch::cli
