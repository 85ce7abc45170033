// The odbatch command line. Only this file sees CLI11: each subcommand's arguments are collected
// here and handed to that subcommand's run function as a plain options struct.
#include <stdlib.h>

#include <chrono>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "audit_command.hpp"
#include "graph_command.hpp"
#include "launch_command.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/log/logger.hpp"
#include "odbatch/sim/step_cost_model.hpp"
#include "plan_command.hpp"
#include "render_command.hpp"
#include "run_command.hpp"
#include "simulate_command.hpp"
#include "stats_command.hpp"
#include "store_command.hpp"
#include "stress_command.hpp"

namespace {

// Usage errors share the exit status of other input errors.
constexpr int kInputErrorStatus = 2;

// A whole number of at least 1. (CLI11's PositiveNumber, failing, names a bound of 300 digits.)
const CLI::Validator kAtLeastOne(
    [](std::string& input) -> std::string {
      const bool digits =
          !input.empty() && input.find_first_not_of("0123456789") == std::string::npos;
      if (!digits) return "expected a whole number of at least 1, got '" + input + "'";
      if (input.find_first_not_of('0') == std::string::npos) return "must be at least 1, got 0";
      return {};
    },
    "AT LEAST 1");

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
  std::uint64_t max_steps = 0;
  std::uint64_t save_state_at = 0;
  std::string state;
  std::string resume;
  std::string ledger;
  std::string json;
  std::string stats_json;
  bool no_progress = false;

  odbatch::cli::RunOptions options() const {
    odbatch::cli::RunOptions o;
    o.config = config;
    o.epochs = epochs;
    o.first_epoch = first_epoch;
    if (max_steps > 0) o.max_steps = max_steps;
    if (save_state_at > 0) o.save_state = odbatch::cli::SaveStateAt{save_state_at, state};
    if (!resume.empty()) o.resume = resume;
    if (!ledger.empty()) o.ledger = ledger;
    if (!json.empty()) o.json = json;
    if (!stats_json.empty()) o.stats_json = stats_json;
    o.progress = !no_progress;
    return o;
  }
};

CLI::App* add_run_command(CLI::App& app, RunArguments& arguments) {
  auto* run = app.add_subcommand("run", "Run the pipeline of a TOML file standalone and summarise");
  run->add_option("config", arguments.config, "Pipeline TOML file (see docs/pipeline-toml.md)")
      ->required();
  run->add_option("--epochs", arguments.epochs, "Epochs to run")->check(kAtLeastOne);
  auto* first_epoch =
      run->add_option("--first-epoch", arguments.first_epoch, "Number of the first epoch");
  run->add_option("--max-steps", arguments.max_steps,
                  "Stop after this many steps in all, as a trainer's max_steps does: every rank "
                  "departs there (Pipeline::depart)")
      ->check(kAtLeastOne)
      ->default_str("");  // unset: no limit
  auto* save_at =
      run->add_option(
             "--save-state-at", arguments.save_state_at,
             "After this many steps of this run (over its epochs), save the loader's checkpoint to "
             "--state (every rank's part, joined by rank 0) and stop there, "
             "as a preempted trainer would")
          ->check(kAtLeastOne)
          ->default_str("");
  auto* state =
      run->add_option("--state", arguments.state, "The checkpoint file --save-state-at writes");
  save_at->needs(state);
  state->needs(save_at);
  auto* resume =
      run->add_option("--resume", arguments.resume,
                      "Resume from a checkpoint file: its epoch goes on at the step it was "
                      "saved at (then --epochs counts from that epoch)");
  run->add_option("--ledger", arguments.ledger,
                  "Write every emitted batch's sample ids and every rejection (JSON Lines); "
                  "{rank} in the path is replaced by the rank");
  run->add_option("--json", arguments.json,
                  "Write the summary as JSON; {rank} in the path is replaced by the rank");
  run->add_option("--stats-json", arguments.stats_json,
                  "Write the pipeline's stats at the end as Pipeline::stats_json() gives them "
                  "(docs/metrics.md); {rank} in the path is replaced by the rank");
  run->add_flag("--no-progress", arguments.no_progress, "No progress line on stderr");
  resume->excludes(first_epoch);
  return run;
}

// `graph`'s arguments as parsed.
struct GraphArguments {
  std::string config;
  std::string format = "text";
  std::string output;
  std::string metrics;
  std::uint32_t interval_ms = 1000;

  odbatch::cli::GraphOptions options() const {
    odbatch::cli::GraphOptions o;
    o.config = config;
    o.format = format == "json"  ? odbatch::cli::GraphFormat::json
               : format == "dot" ? odbatch::cli::GraphFormat::dot
               : format == "svg" ? odbatch::cli::GraphFormat::svg
                                 : odbatch::cli::GraphFormat::text;
    if (!output.empty()) o.output = output;
    if (!metrics.empty()) o.metrics_url = metrics;
    o.interval_ms = interval_ms;
    return o;
  }
};

CLI::App* add_graph_command(CLI::App& app, GraphArguments& arguments) {
  auto* graph = app.add_subcommand(
      "graph",
      "Draw the actor graph a pipeline file builds: actors and pools, user stages, bounded edges "
      "and their capacities (docs/stages.md)");
  graph->add_option("config", arguments.config, "Pipeline TOML")->required();
  graph->add_option("--format", arguments.format, "text, json, dot (Graphviz) or svg")
      ->check(CLI::IsMember({"text", "json", "dot", "svg"}));
  graph->add_option("--output", arguments.output, "Write it to this file (default: stdout)");
  graph->add_option("--metrics", arguments.metrics,
                    "A running pipeline's metrics endpoint (http://HOST:PORT/metrics): adds each "
                    "stage's rate and blocked share between two scrapes");
  graph->add_option("--interval-ms", arguments.interval_ms, "Between the two scrapes")
      ->check(CLI::Range(10u, 600'000u));
  return graph;
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
      ->required()
      ->default_str("");
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
  bool no_prefix = false;

  odbatch::cli::LaunchOptions options() const {
    odbatch::cli::LaunchOptions o;
    o.nproc = nproc;
    o.master_addr = master_addr;
    o.master_port = master_port;
    o.grace = std::chrono::milliseconds(grace_ms);
    o.command = command;
    o.prefix_output = !no_prefix;
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
      ->default_str("")
      ->check(CLI::Range(1u, 1024u));
  launch->add_option("--master-addr", arguments.master_addr,
                     "MASTER_ADDR: where rank 0's stores are (an IPv4 address of this machine)");
  launch->add_option("--master-port", arguments.master_port,
                     "MASTER_PORT, for torch's store; 0: a free one (odbatch's store gets "
                     "ODBATCH_STORE_PORT, another free one)");
  launch->add_flag("--no-prefix", arguments.no_prefix,
                   "Ranks write straight to this stdout and stderr, without \"[rank R]: \" before "
                   "each line");
  launch->add_option("--grace-ms", arguments.grace_ms,
                     "After a failure or a signal, how long the ranks have to exit before SIGKILL");
  launch->add_option("command", arguments.command, "The command to run, after --")
      ->required()
      ->default_str("");
  return launch;
}

// `stats`'s arguments as parsed.
struct StatsArguments {
  std::string input;
  std::string tokenizer;
  std::string image_root;
  std::string trace;
  std::string json;
  std::string plot;
  std::uint32_t bins = 20;

  odbatch::cli::StatsOptions options() const {
    odbatch::cli::StatsOptions o;
    o.input = input;
    if (!tokenizer.empty()) o.tokenizer = tokenizer;
    if (!image_root.empty()) o.image_root = image_root;
    if (!trace.empty()) o.trace = trace;
    if (!json.empty()) o.json = json;
    if (!plot.empty()) o.plot = plot;
    o.bins = bins;
    return o;
  }
};

CLI::App* add_stats_command(CLI::App& app, StatsArguments& arguments) {
  auto* stats = app.add_subcommand(
      "stats",
      "Run one epoch of a pipeline's preprocessing (no batching) and report the post-pipeline "
      "lengths: tokens, labels, patches");
  stats
      ->add_option("input", arguments.input,
                   "Pipeline TOML file, or a JSONL dataset (then --tokenizer is required)")
      ->required();
  stats->add_option("--tokenizer", arguments.tokenizer, "Sentencepiece model for a JSONL dataset");
  stats->add_option("--image-root", arguments.image_root,
                    "Image directory of a JSONL dataset (default: the file's directory)");
  stats->add_option("--trace", arguments.trace,
                    "Write every sample's id,tokens,labels,patches (CSV) for `odbatch simulate`");
  stats->add_option("--json", arguments.json, "Write the report as JSON");
  stats->add_option("--plot", arguments.plot,
                    "Draw the token-length histogram (log scale, budget and window marked) to "
                    "FILE.svg or FILE.png with gnuplot");
  stats->add_option("--bins", arguments.bins, "Histogram bins")->check(CLI::Range(1, 1000));
  return stats;
}

// `render`'s arguments as parsed.
struct RenderArguments {
  std::string config;
  std::string records_file;
  std::string record;
  bool json = false;
  bool color = false;
  bool no_color = false;

  odbatch::cli::RenderOptions options() const {
    odbatch::cli::RenderOptions o;
    o.config = config;
    if (!records_file.empty()) o.records_file = records_file;
    if (!record.empty()) o.record = record;
    o.json = json;
    if (color) o.color = true;
    if (no_color) o.color = false;
    return o;
  }
};

CLI::App* add_render_command(CLI::App& app, RenderArguments& arguments) {
  auto* render = app.add_subcommand(
      "render",
      "Show what the tokenizer of a pipeline makes of records: the rendered chat template, the "
      "token ids with their pieces, and the supervised positions");
  render->add_option("config", arguments.config, "Pipeline TOML file")->required();
  render->add_option("records", arguments.records_file,
                     "Dataset file (JSONL, JSON array or tar shard) whose records are all "
                     "rendered (default: the first record of the config's first source file)");
  render
      ->add_option("--record", arguments.record,
                   "One record: FILE:LINE (JSONL, lines from 1), FILE[N] (JSON array element or "
                   "tar sample, from 0) or SHARD:KEY")
      ->excludes(render->get_option("records"));
  render->add_flag("--json", arguments.json, "Write JSON: text, ids, pieces, labels per record");
  auto* color = render->add_flag("--color", arguments.color, "Colour even when not a terminal");
  render->add_flag("--no-color", arguments.no_color, "Never colour")->excludes(color);
  return render;
}

// `simulate`'s arguments as parsed.
struct SimulateArguments {
  std::string trace;
  std::string distribution;
  std::uint64_t samples = 100000;
  std::string name;
  std::uint32_t ranks = 8;
  std::uint32_t nodes = 1;
  std::uint32_t token_budget = 12288;
  std::string budget_mode = "padded";
  std::uint32_t window = 1024;
  std::uint32_t max_seq_len = 16384;
  std::string warmup = "none";
  std::string reference_warmup = "linear";
  std::string model = "2b";
  std::string calibration;
  std::vector<std::uint32_t> batch_sizes{1, 2, 4, 8};
  std::uint32_t buckets_per_octave = 4;
  std::uint64_t seed = 1;
  std::string json;
  std::string plot;

  odbatch::cli::SimulateOptions options() const {
    odbatch::cli::SimulateOptions o;
    if (!trace.empty()) o.trace = trace;
    if (!distribution.empty()) o.distribution = distribution;
    o.samples = samples;
    o.name = name;
    o.ranks = ranks;
    o.nodes = nodes;
    o.token_budget = token_budget;
    o.budget_mode = *odbatch::parse_budget_mode(budget_mode);
    o.window = window;
    o.max_seq_len = max_seq_len;
    o.warmup = *odbatch::parse_warmup(warmup);
    o.reference_warmup = *odbatch::parse_warmup(reference_warmup);
    o.model = model;
    if (!calibration.empty()) o.calibration = calibration;
    o.batch_sizes = batch_sizes;
    o.buckets_per_octave = buckets_per_octave;
    o.seed = seed;
    if (!json.empty()) o.json = json;
    if (!plot.empty()) o.plot = plot;
    return o;
  }
};

CLI::App* add_simulate_command(CLI::App& app, SimulateArguments& arguments) {
  auto* simulate = app.add_subcommand(
      "simulate",
      "Simulate an epoch's throughput under Standard fixed batches, the offline oracles GMT and "
      "BMT, and ODB (reference and balanced), with a step cost model (docs/simulation.md)");
  auto* trace = simulate->add_option("--trace", arguments.trace,
                                     "Length trace written by `odbatch stats --trace`");
  auto* distribution =
      simulate->add_option("--dist", arguments.distribution,
                           "Synthetic lengths: lognormal:mean=M,cv=C or "
                           "bimodal:short_mean=M,short_cv=C,long_mean=M,long_cv=C,short_weight=W");
  trace->excludes(distribution);
  simulate->add_option("--samples", arguments.samples, "Samples drawn from --dist")
      ->check(kAtLeastOne);
  simulate->add_option("--name", arguments.name, "The workload's name in the report");
  simulate->add_option("--ranks", arguments.ranks, "Data-parallel ranks in all")
      ->check(CLI::Range(1, 4096));
  simulate->add_option("--nodes", arguments.nodes, "Nodes the ranks span (dividing --ranks)")
      ->check(CLI::Range(1, 512));
  simulate->add_option("--token-budget", arguments.token_budget, "Token budget per group")
      ->check(kAtLeastOne);
  simulate
      ->add_option("--budget-mode", arguments.budget_mode,
                   "padded (|g| * max L, padded layout) or packed (sum L, varlen layout)")
      ->check(CLI::IsMember({"padded", "packed"}));
  simulate->add_option("--window", arguments.window, "ODB window: samples admitted per round")
      ->check(kAtLeastOne);
  simulate->add_option("--max-seq-len", arguments.max_seq_len, "Cap of lengths drawn from --dist")
      ->check(kAtLeastOne);
  simulate->add_option("--warmup", arguments.warmup, "Warm-up of the balanced policy")
      ->check(CLI::IsMember({"none", "short", "linear"}));
  simulate
      ->add_option("--reference-warmup", arguments.reference_warmup,
                   "Warm-up of the reference policy (the public package ramps linearly)")
      ->check(CLI::IsMember({"none", "short", "linear"}));
  simulate->add_option("--model", arguments.model, "Cost model preset")
      ->check(CLI::IsMember(odbatch::cost_model_preset_names()));
  simulate->add_option("--calibrate", arguments.calibration,
                       "Fit the preset's t0 and a from two measured steps N1:T1,N2:T2 (samples "
                       "per rank, seconds)");
  simulate
      ->add_option("--batch-sizes", arguments.batch_sizes,
                   "Standard's per-rank batch sizes; speedups are over the first")
      ->delimiter(',')
      ->check(kAtLeastOne);
  simulate
      ->add_option("--bmt-buckets-per-octave", arguments.buckets_per_octave,
                   "BMT's length buckets per doubling of the length")
      ->check(CLI::Range(1, 64));
  simulate->add_option("--seed", arguments.seed, "Seed of drawn lengths, sharding and shuffles");
  simulate->add_option("--json", arguments.json, "Write the report as JSON");
  simulate->add_option("--plot", arguments.plot,
                       "Draw each schedule's speedup over Standard and padding efficiency to "
                       "FILE.svg or FILE.png with gnuplot");
  return simulate;
}

// ---- `store`: the control plane's TCP store, standalone ----
struct StoreArguments {
  std::string host;
  std::uint16_t port = 0;
  bool token_env = false;

  odbatch::cli::StoreOptions options() const {
    odbatch::cli::StoreOptions o;
    o.host = host;
    o.port = port;
    o.token_from_env = token_env;
    return o;
  }
};

CLI::App* add_store_command(CLI::App& app, StoreArguments& arguments) {
  auto* store = app.add_subcommand(
      "store", "Run the control plane's TCP store alone until SIGINT or SIGTERM (docs/store.md)");
  store->add_option("--host", arguments.host, "Address to bind, e.g. the MASTER_ADDR of the run")
      ->required();
  store->add_option("--port", arguments.port, "Port to bind; 0 picks a free one (printed)")
      ->required()
      ->default_str("");
  store->add_flag("--token-env", arguments.token_env,
                  "Require clients to present the token in ODBATCH_STORE_TOKEN");
  return store;
}
// ---- end of `store` ----

// `stress`'s arguments as parsed.
struct StressArguments {
  std::string config;
  std::uint32_t runs = 10;
  std::uint32_t ranks = 2;
  std::string faults = "random";
  bool each = false;
  std::uint64_t seed = 1;
  std::uint64_t slack_ms = 3'000;
  std::uint64_t run_timeout_ms = 600'000;
  std::string dir;
  std::string json;

  odbatch::cli::StressOptions options() const {
    odbatch::cli::StressOptions o;
    o.config = config;
    o.runs = runs;
    o.ranks = ranks;
    o.faults = faults;
    o.each = each;
    o.seed = seed;
    o.slack = std::chrono::milliseconds(slack_ms);
    o.run_timeout = std::chrono::milliseconds(run_timeout_ms);
    o.dir = dir;
    if (!json.empty()) o.json = json;
    return o;
  }
};

CLI::App* add_stress_command(CLI::App& app, StressArguments& arguments) {
  auto* stress = app.add_subcommand(
      "stress",
      "Run the pipeline repeatedly with local ranks as processes, injecting a fault into one "
      "rank per run, and check that every rank fails fast or the audit passes "
      "(docs/distributed.md)");
  stress->add_option("config", arguments.config, "Pipeline TOML")->required();
  stress->add_option("--runs", arguments.runs, "Runs; the first has no fault")
      ->check(CLI::Range(1u, 1'000'000u));
  stress->add_option("--ranks", arguments.ranks, "Ranks per run")->check(CLI::Range(2u, 256u));
  stress->add_option("--faults", arguments.faults,
                     "random (every kind), none, or kinds separated by commas: kill, stop, delay, "
                     "corrupt, truncate, wrong_version, store_unreachable, config_divergence, "
                     "hostile_records");
  stress->add_flag("--each", arguments.each,
                   "Take the kinds in turn (run 1 the first, ...) rather than at random");
  stress->add_option("--seed", arguments.seed, "Seed of the faults' kinds, ranks and rounds");
  stress->add_option("--slack-ms", arguments.slack_ms,
                     "Added to each fault's abort bound (store calls, process exit)");
  stress->add_option("--run-timeout-ms", arguments.run_timeout_ms,
                     "A run without a fault that takes longer has hung");
  stress->add_option("--dir", arguments.dir, "Directory for every run's logs and ledgers");
  stress->add_option("--json", arguments.json, "Write the table as JSON");
  return stress;
}
// ---- end of `stress` ----

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"odbatch: online dynamic batching tools"};
  app.set_version_flag("--version", "odbatch " ODBATCH_VERSION);
  // Every option's help shows its default; subcommands inherit this.
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  // Given before or after the subcommand.
  app.fallthrough();
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "Diagnostics on stderr from this level up: trace, debug, info, warn, error or off "
                 "(unset: ODBATCH_LOG_LEVEL, else warn); ranks that launch starts inherit it")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error", "off"}));
  PlanArguments plan_arguments;
  const CLI::App* plan = add_plan_command(app, plan_arguments);
  RunArguments run_arguments;
  const CLI::App* run = add_run_command(app, run_arguments);
  AuditArguments audit_arguments;
  const CLI::App* audit = add_audit_command(app, audit_arguments);
  GraphArguments graph_arguments;
  const CLI::App* graph = add_graph_command(app, graph_arguments);
  StoreArguments store_arguments;  // `store`
  const CLI::App* store = add_store_command(app, store_arguments);
  StatsArguments stats_arguments;
  const CLI::App* stats = add_stats_command(app, stats_arguments);
  RenderArguments render_arguments;
  const CLI::App* render = add_render_command(app, render_arguments);
  SimulateArguments simulate_arguments;
  CLI::App* simulate = add_simulate_command(app, simulate_arguments);
  LaunchArguments launch_arguments;
  const CLI::App* launch = add_launch_command(app, launch_arguments);
  StressArguments stress_arguments;
  const CLI::App* stress = add_stress_command(app, stress_arguments);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kInputErrorStatus;
  }
  if (!log_level.empty()) {
    odbatch::set_log_level(*odbatch::parse_log_level(log_level));
    ::setenv("ODBATCH_LOG_LEVEL", log_level.c_str(), 1);
  }

  try {
    if (plan->parsed()) return odbatch::cli::run_plan_command(plan_arguments.options());
    if (run->parsed()) return odbatch::cli::run_pipeline_command(run_arguments.options());
    if (audit->parsed()) return odbatch::cli::run_audit_command(audit_arguments.options());
    if (graph->parsed()) return odbatch::cli::run_graph_command(graph_arguments.options());
    if (store->parsed()) return odbatch::cli::run_store_command(store_arguments.options());
    if (stats->parsed()) return odbatch::cli::run_stats_command(stats_arguments.options());
    if (render->parsed()) return odbatch::cli::run_render_command(render_arguments.options());
    if (simulate->parsed()) {
      if (simulate_arguments.trace.empty() == simulate_arguments.distribution.empty()) {
        std::cerr << simulate->help() << "odbatch simulate: give --trace or --dist\n";
        return kInputErrorStatus;
      }
      return odbatch::cli::run_simulate_command(simulate_arguments.options());
    }
    if (launch->parsed()) return odbatch::cli::run_launch_command(launch_arguments.options());
    if (stress->parsed()) return odbatch::cli::run_stress_command(stress_arguments.options());
  } catch (const std::exception& e) {
    std::cerr << "odbatch: internal error: " << e.what() << '\n';
  }
  return 1;
}
