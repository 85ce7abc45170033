// The odbatch command line. Only this file sees CLI11: each subcommand's arguments are collected
// here and handed to that subcommand's run function as a plain options struct.
#include <chrono>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "audit_command.hpp"
#include "launch_command.hpp"
#include "odbatch/core/config.hpp"
#include "plan_command.hpp"
#include "run_command.hpp"

namespace {

// Usage errors share the exit status of other input errors.
constexpr int kInputErrorStatus = 2;

// `plan`'s arguments as parsed; empty strings stand for options not given.
struct PlanArguments {
  std::string scenario;
  std::string policy;
  std::string config_file;
  std::string output;
  bool summary = false;

  odbatch::cli::PlanOptions options() const {
    odbatch::cli::PlanOptions o;
    o.scenario = scenario;
    if (!policy.empty()) o.policy = odbatch::parse_policy(policy);
    if (!config_file.empty()) o.config_file = config_file;
    if (!output.empty()) o.output = output;
    o.summary = summary;
    return o;
  }
};

CLI::App* add_plan_command(CLI::App& app, PlanArguments& arguments) {
  auto* plan = app.add_subcommand(
      "plan", "Show the round plan(s) of a JSON scenario: one round, or a whole epoch of shards");
  plan->add_option("--policy", arguments.policy,
                   "Plan function, overriding every config: balanced or reference")
      ->check(CLI::IsMember({"balanced", "reference"}));
  plan->add_option("--config", arguments.config_file,
                   "TOML file whose [batching] table overrides the scenario's config");
  plan->add_option("--output,-o", arguments.output, "Write the JSON report here instead of stdout");
  plan->add_flag("--summary", arguments.summary,
                 "Print a text summary per round and of the epoch; the JSON report then goes only "
                 "to --output");
  plan->add_option("scenario", arguments.scenario, "Scenario JSON file (see docs/plan-json.md)")
      ->required();
  return plan;
}

// `run`'s arguments as parsed.
struct RunArguments {
  std::string config;
  std::uint64_t epochs = 1;
  std::uint64_t first_epoch = 0;
  std::string ledger;
  std::string json;
  bool no_progress = false;

  odbatch::cli::RunOptions options() const {
    odbatch::cli::RunOptions o;
    o.config = config;
    o.epochs = epochs;
    o.first_epoch = first_epoch;
    if (!ledger.empty()) o.ledger = ledger;
    if (!json.empty()) o.json = json;
    o.progress = !no_progress;
    return o;
  }
};

CLI::App* add_run_command(CLI::App& app, RunArguments& arguments) {
  auto* run = app.add_subcommand("run", "Run the pipeline of a TOML file standalone and summarise");
  run->add_option("config", arguments.config, "Pipeline TOML file (see docs/pipeline-toml.md)")
      ->required();
  run->add_option("--epochs", arguments.epochs, "Epochs to run")->check(CLI::PositiveNumber);
  run->add_option("--first-epoch", arguments.first_epoch, "Number of the first epoch");
  run->add_option("--ledger", arguments.ledger,
                  "Write every emitted batch's sample ids and every rejection (JSON Lines)");
  run->add_option("--json", arguments.json, "Write the summary as JSON");
  run->add_flag("--no-progress", arguments.no_progress, "No progress line on stderr");
  return run;
}

// `audit`'s arguments as parsed.
struct AuditArguments {
  std::vector<std::string> ledgers;
  std::string config;
  std::string json;

  odbatch::cli::AuditOptions options() const {
    odbatch::cli::AuditOptions o;
    o.ledgers.assign(ledgers.begin(), ledgers.end());
    if (!config.empty()) o.config = config;
    if (!json.empty()) o.json = json;
    return o;
  }
};

CLI::App* add_audit_command(CLI::App& app, AuditArguments& arguments) {
  auto* audit = app.add_subcommand(
      "audit",
      "Check run ledgers (one per rank): every id of each epoch emitted or rejected exactly once, "
      "every rank present, equal step counts");
  audit->add_option("ledgers", arguments.ledgers, "Ledger files written by `odbatch run --ledger`")
      ->required();
  audit->add_option("--config", arguments.config,
                    "Pipeline TOML whose dataset, seed, shuffle and split the ledgers must match");
  audit->add_option("--json", arguments.json, "Write the report as JSON");
  return audit;
}

// `launch`'s arguments as parsed.
struct LaunchArguments {
  std::uint32_t nproc = 1;
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 0;
  std::uint64_t grace_ms = 10'000;
  std::vector<std::string> command;

  odbatch::cli::LaunchOptions options() const {
    odbatch::cli::LaunchOptions o;
    o.nproc = nproc;
    o.master_addr = master_addr;
    o.master_port = master_port;
    o.grace = std::chrono::milliseconds(grace_ms);
    o.command = command;
    return o;
  }
};

CLI::App* add_launch_command(CLI::App& app, LaunchArguments& arguments) {
  auto* launch = app.add_subcommand(
      "launch",
      "Start N local ranks of a command with torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, "
      "MASTER_ADDR, MASTER_PORT); the first failure or a signal stops them all");
  launch->add_option("--nproc", arguments.nproc, "Number of ranks")
      ->required()
      ->check(CLI::Range(1u, 1024u));
  launch->add_option("--master-addr", arguments.master_addr,
                     "Address of rank 0's store (an IPv4 address of this machine)");
  launch->add_option("--master-port", arguments.master_port,
                     "Port of rank 0's store; 0: a free one");
  launch->add_option("--grace-ms", arguments.grace_ms,
                     "After a failure or a signal, how long the ranks have to exit before SIGKILL");
  launch->add_option("command", arguments.command, "The command to run, after --")->required();
  return launch;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"odbatch: online dynamic batching tools"};
  app.require_subcommand(1);
  PlanArguments plan_arguments;
  const CLI::App* plan = add_plan_command(app, plan_arguments);
  RunArguments run_arguments;
  const CLI::App* run = add_run_command(app, run_arguments);
  AuditArguments audit_arguments;
  const CLI::App* audit = add_audit_command(app, audit_arguments);
  LaunchArguments launch_arguments;
  const CLI::App* launch = add_launch_command(app, launch_arguments);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kInputErrorStatus;
  }

  try {
    if (plan->parsed()) return odbatch::cli::run_plan_command(plan_arguments.options());
    if (run->parsed()) return odbatch::cli::run_pipeline_command(run_arguments.options());
    if (audit->parsed()) return odbatch::cli::run_audit_command(audit_arguments.options());
    if (launch->parsed()) return odbatch::cli::run_launch_command(launch_arguments.options());
  } catch (const std::exception& e) {
    std::cerr << "odbatch: internal error: " << e.what() << '\n';
  }
  return 1;
}
