// The odbatch command line. Only this file sees CLI11: each subcommand's arguments are collected
// here and handed to that subcommand's run function as a plain options struct.
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "odbatch/core/config.hpp"
#include "plan_command.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"odbatch: online dynamic batching tools"};
  app.require_subcommand(1);
  PlanArguments plan_arguments;
  const CLI::App* plan = add_plan_command(app, plan_arguments);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kInputErrorStatus;
  }

  try {
    if (plan->parsed()) return odbatch::cli::run_plan_command(plan_arguments.options());
  } catch (const std::exception& e) {
    std::cerr << "odbatch: internal error: " << e.what() << '\n';
  }
  return 1;
}
