#include "stress_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <variant>
#include <vector>

#include "config_variant.hpp"
#include "json_output.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/fault_spec.hpp"
#include "odbatch/core/toml_string.hpp"
#include "odbatch/dist/local_launcher.hpp"
#include "rank_processes.hpp"
#include "stress_checks.hpp"

namespace odbatch::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A change of a run's inputs rather than a fault in one of its processes.
enum class InputFault : std::uint8_t {
  config_divergence,  // one rank runs with [source] shuffle flipped: every rank fails at round 0
  hostile_records,    // records with out-of-range numbers and malformed JSON: each is rejected
};
constexpr std::array kInputFaults{InputFault::config_divergence, InputFault::hostile_records};

std::string_view to_string(InputFault fault) {
  switch (fault) {
    case InputFault::config_divergence:
      return "config_divergence";
    case InputFault::hostile_records:
      return "hostile_records";
  }
  return "?";
}

// A kind of the matrix: a fault injected into a rank (ODBATCH_FAULT) or an input fault.
using StressKind = std::variant<FaultKind, InputFault>;

std::string kind_name(const StressKind& kind) {
  return std::visit([](auto k) { return std::string(to_string(k)); }, kind);
}

std::vector<StressKind> all_kinds() {
  std::vector<StressKind> kinds;
  for (const FaultKind k : all_fault_kinds()) kinds.emplace_back(k);
  for (const InputFault k : kInputFaults) kinds.emplace_back(k);
  return kinds;
}

std::vector<StressKind> parse_kinds(const std::string& text) {
  if (text == "random") return all_kinds();
  if (text == "none") return {};
  std::vector<StressKind> kinds;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto all = all_kinds();
    const auto found = std::find_if(all.begin(), all.end(),
                                    [&](const StressKind& k) { return kind_name(k) == item; });
    if (found == all.end())
      throw std::invalid_argument("--faults: unknown fault kind '" + item + "'");
    kinds.push_back(*found);
  }
  if (kinds.empty()) throw std::invalid_argument("--faults: no fault kind given");
  return kinds;
}

// What one run injects: nothing, a fault into one rank's process, or an input fault.
struct Injection {
  std::optional<FaultSpec> fault;
  std::optional<InputFault> input;
  std::uint32_t rank = 0;  // config_divergence: the rank configured apart

  std::string kind() const {
    if (fault) return std::string(to_string(fault->kind));
    if (input) return std::string(to_string(*input));
    return "none";
  }
  std::string text() const {
    if (fault) return to_string(*fault);
    if (input == InputFault::config_divergence)
      return "config_divergence,rank=" + std::to_string(rank);
    if (input) return std::string(to_string(*input));
    return "none";
  }
};

// Records a parser must reject (malformed_json) without stopping the run: numbers beyond a
// double's range and JSON that does not parse.
const std::vector<std::string>& hostile_lines() {
  static const std::vector<std::string> lines = {
      R"({"x":1e400,"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}]})",
      R"({"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}],"w":-1e400})",
      R"({"conversations":[{"from":"human","value":"hi","n":[1e999]},{"from":"gpt","value":"x"}]})",
      R"({"conversations":[{"from":"human","value":"unterminated}]})",
      R"({"conversations":[{"from":"human","value":"hi"},],})",
      R"({"conversations": [{"from": "human", "value": "hi"})",
      R"(not json at all)",
  };
  return lines;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The wall-clock time the faulted rank announced its injection at, if it injected.
std::optional<long long> injection_time(const std::string& faulted_stderr) {
  const std::string marker = "at unix_ms=";
  const auto at = faulted_stderr.find(marker);
  if (at == std::string::npos) return std::nullopt;
  return std::stoll(faulted_stderr.substr(at + marker.size()));
}

// The highest round any step of the run's ledgers came from, plus one.
std::uint64_t rounds_in_ledgers(const fs::path& dir, std::uint32_t world) {
  std::uint64_t rounds = 0;
  for (std::uint32_t r = 0; r < world; ++r) {
    std::ifstream in(dir / ("ledger-" + std::to_string(r) + ".jsonl"));
    for (std::string line; std::getline(in, line);) {
      const auto entry = nlohmann::json::parse(line);
      if (entry.value("kind", "") == "step")
        rounds = std::max(rounds, entry.at("round").get<std::uint64_t>() + 1);
    }
  }
  return rounds;
}

// A config written next to the given one (so that its relative paths keep their meaning) with
// some [source] keys changed; removed again when it goes.
class ConfigVariant {
 public:
  ConfigVariant(const fs::path& config, const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& source_values)
      : file_(config.parent_path() / ("." + config.stem().string() + ".stress-" +
                                      std::to_string(::getpid()) + "-" + name + ".toml")) {
    std::ofstream out(file_, std::ios::binary);
    out << with_table_values(read_text(config), "source", source_values);
    if (!out.flush())
      throw std::runtime_error("cannot write " + file_.string() + " (a config next to " +
                               config.string() + ")");
  }
  ~ConfigVariant() {
    std::error_code ignored;
    fs::remove(file_, ignored);
  }
  ConfigVariant(const ConfigVariant&) = delete;
  ConfigVariant& operator=(const ConfigVariant&) = delete;

  const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

struct RunOutcome {
  std::uint32_t index = 0;
  Injection injection;
  bool injected = false;
  bool must_fail = false;
  bool hang = false;
  std::optional<long long> max_abort_ms;  // of the ranks other than the faulted one
  milliseconds bound{0};                  // the largest of theirs
  std::uint32_t over_bound = 0;
  std::uint32_t unnamed_causes = 0;          // failed ranks whose error does not name the cause
  std::uint32_t success_beside_failure = 0;  // ranks that exited 0 while another failed
  std::uint64_t audit_problems = 0;
  std::uint64_t lost = 0;
  double seconds = 0;
  std::vector<std::string> problems;
};

class StressRun {
 public:
  StressRun(const StressOptions& options, const fs::path& self, const AbortTiming& timing,
            const PipelineConfig& config)
      : options_(options), self_(self), timing_(timing), config_(config) {}

  RunOutcome run(std::uint32_t index, const Injection& injection, milliseconds hang_after) {
    RunOutcome out;
    out.index = index;
    out.injection = injection;
    const fs::path dir = options_.dir / ("run" + std::to_string(index));
    fs::remove_all(dir);
    fs::create_directories(dir);

    RankProcessSpec spec;
    spec.command = rank_command(options_.config, dir);
    spec.world_size = options_.ranks;
    spec.master_port = free_tcp_port(spec.master_addr);
    do spec.store_port = free_tcp_port(spec.master_addr);
    while (spec.store_port == spec.master_port);
    spec.output_dir = dir;
    spec.extra_environment["ODBATCH_RUN_ID"] = "stress-" + std::to_string(index);
    if (injection.fault) spec.extra_environment["ODBATCH_FAULT"] = to_string(*injection.fault);
    std::optional<ConfigVariant> variant;
    fs::path audited_config = options_.config;
    if (injection.input == InputFault::config_divergence) {
      variant.emplace(options_.config, "run" + std::to_string(index),
                      std::vector<std::pair<std::string, std::string>>{
                          {"shuffle", config_.source.shuffle ? "false" : "true"}});
      check_variant(variant->file(), [&](const PipelineConfig& c) {
        return c.source.shuffle != config_.source.shuffle;
      });
      spec.rank_commands[injection.rank] = rank_command(variant->file(), dir);
    }
    if (injection.input == InputFault::hostile_records) {
      // The hostile records come first, so that their ids are 0 to n - 1.
      std::ofstream hostile(dir / "hostile.jsonl", std::ios::binary);
      for (const auto& line : hostile_lines()) hostile << line << '\n';
      if (!hostile.flush())
        throw std::runtime_error("cannot write " + (dir / "hostile.jsonl").string());
      std::string files = "[" + toml_string((dir / "hostile.jsonl").string());
      for (const auto& file : config_.source.files) files += ", " + toml_string(file);
      variant.emplace(options_.config, "run" + std::to_string(index),
                      std::vector<std::pair<std::string, std::string>>{
                          {"files", files + "]"}, {"on_bad_record", "\"skip\""}});
      check_variant(variant->file(), [&](const PipelineConfig& c) {
        return c.source.files.size() == config_.source.files.size() + 1 &&
               c.source.on_bad_record == BadRecordPolicy::skip;
      });
      spec.command = rank_command(variant->file(), dir);
      audited_config = variant->file();
    }

    const auto started = std::chrono::steady_clock::now();
    auto ranks = start_ranks(spec);
    if (!wait_for_ranks(ranks, started + hang_after)) {
      out.hang = true;
      out.problems.push_back("hang: ranks still running " + std::to_string(hang_after.count()) +
                             " ms after the start; killed");
    }
    for (const auto& rank : ranks)
      if (rank.exited && group_left_running(rank))
        out.problems.push_back("rank " + std::to_string(rank.rank) +
                               " left a process running after it exited; killed");
    kill_ranks(ranks);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    const auto& fault = injection.fault;
    std::optional<long long> fault_ms;
    if (fault) fault_ms = injection_time(read_text(ranks[fault->rank].stderr_file));
    out.injected = fault_ms.has_value() || injection.input.has_value();
    out.must_fail = (fault_ms && fault_fails_run(*fault, timing_)) ||
                    injection.input == InputFault::config_divergence;
    // Faults are placed among run 0's rounds, which every run has: one never injected means the
    // injector is broken.
    if (fault && !fault_ms && !out.hang)
      out.problems.push_back("the fault was never injected: " +
                             ranks[fault->rank].stderr_file.string());
    if (fault_ms && out.must_fail)
      check_failure(*fault, *fault_ms, ranks, out);
    else if (injection.input == InputFault::config_divergence)
      check_divergence(ranks, out);
    else if (!out.hang)
      check_success(dir, audited_config, ranks, out);
    if (injection.input == InputFault::hostile_records && out.problems.empty())
      check_hostile_rejected(dir, out);
    return out;
  }

 private:
  std::vector<std::string> rank_command(const fs::path& config, const fs::path& dir) const {
    return {self_.string(),  "run",      "--no-progress",
            config.string(), "--ledger", (dir / "ledger-{rank}.jsonl").string()};
  }

  // Parses a variant as the ranks will, and checks that it changed what it was meant to.
  template <typename Changed>
  void check_variant(const fs::path& file, Changed changed) const {
    const std::string cannot =
        "cannot vary [source] in " + options_.config.string() +
        " (write it as a [source] table, without dotted keys): " + file.string();
    try {
      if (changed(PipelineConfig::from_toml_file(file))) return;
    } catch (const std::exception& e) {
      throw std::runtime_error(cannot + ": " + e.what());
    }
    throw std::runtime_error(cannot + " does not change it");
  }

  // A rank that exited 0 beside one that failed: the run's outcome differs between ranks.
  void check_no_success_beside_failure(const std::vector<RankProcess>& ranks,
                                       RunOutcome& out) const {
    const auto failed = std::find_if(ranks.begin(), ranks.end(), [](const RankProcess& r) {
      return r.exited && r.exit_code != 0;
    });
    if (failed == ranks.end()) return;
    for (const auto& rank : ranks)
      if (rank.exited && rank.exit_code == 0) {
        ++out.success_beside_failure;
        out.problems.push_back("rank " + std::to_string(rank.rank) + " exited 0 while rank " +
                               std::to_string(failed->rank) + " failed (exit " +
                               std::to_string(failed->exit_code) + ")");
      }
  }

  void note_unnamed(const RankProcess& rank, const std::vector<std::string>& cause,
                    RunOutcome& out) const {
    const std::string stderr_text = read_text(rank.stderr_file);
    const auto why = unnamed_cause(stderr_text, cause);
    if (!why) return;
    ++out.unnamed_causes;
    // The error itself, so that the report says what was wrong with it without the logs.
    std::string error = run_error_lines(stderr_text);
    if (error.size() > 600) error = error.substr(0, 600) + "...";
    if (!error.empty() && error.back() == '\n') error.pop_back();
    out.problems.push_back("rank " + std::to_string(rank.rank) +
                           " failed without naming the cause: " + *why + ": " +
                           rank.stderr_file.string() + (error.empty() ? "" : ": " + error));
  }

  void check_failure(const FaultSpec& fault, long long fault_ms,
                     const std::vector<RankProcess>& ranks, RunOutcome& out) const {
    const std::string culprit = fault.kind == FaultKind::store_unreachable
                                    ? std::string("store")
                                    : "rank " + std::to_string(fault.rank);
    check_no_success_beside_failure(ranks, out);
    for (const auto& rank : ranks) {
      const std::string who = "rank " + std::to_string(rank.rank);
      if (!rank.exited) continue;  // a hang, reported as such
      if (rank.exit_code == 0) {
        out.problems.push_back(who + " claimed success");
        continue;
      }
      if (rank.rank == fault.rank) {
        // Killed by its own fault, or it failed after it: its error may see the fault through
        // the others (the store gone once they left), but it must name it or the store.
        if (fault.kind == FaultKind::kill) continue;
        const std::string error = run_error_lines(read_text(rank.stderr_file));
        if (!mentions(error, culprit) && !mentions(error, "store"))
          note_unnamed(rank, {culprit}, out);
        continue;
      }
      // Rank 0 hosts the store (stress runs set no ODBATCH_STORE_ADDR).
      const milliseconds bound = exit_bound(fault, timing_, rank.rank == 0) + options_.slack;
      out.bound = std::max(out.bound, bound);
      const long long abort_ms = rank.exit_unix_ms - fault_ms;
      out.max_abort_ms = std::max(out.max_abort_ms.value_or(abort_ms), abort_ms);
      if (milliseconds(abort_ms) > bound) {
        ++out.over_bound;
        out.problems.push_back(who + " exited " + std::to_string(abort_ms) +
                               " ms after the fault, over its bound of " +
                               std::to_string(bound.count()) + " ms");
      }
      note_unnamed(rank, {culprit, "round "}, out);
    }
  }

  // Every rank fails at the first round, naming the setting that differs.
  void check_divergence(const std::vector<RankProcess>& ranks, RunOutcome& out) const {
    check_no_success_beside_failure(ranks, out);
    for (const auto& rank : ranks) {
      if (!rank.exited) continue;  // a hang, reported as such
      if (rank.exit_code == 0) {
        out.problems.push_back("rank " + std::to_string(rank.rank) + " succeeded though rank " +
                               std::to_string(out.injection.rank) +
                               " runs with source.shuffle flipped");
        continue;
      }
      note_unnamed(rank, {"source.shuffle", "differ", "round 0"}, out);
    }
  }

  void check_success(const fs::path& dir, const fs::path& config,
                     const std::vector<RankProcess>& ranks, RunOutcome& out) const {
    check_no_success_beside_failure(ranks, out);
    for (const auto& rank : ranks)
      if (rank.exit_code != 0)
        out.problems.push_back("rank " + std::to_string(rank.rank) + " failed (exit " +
                               std::to_string(rank.exit_code) +
                               ") in a run that must succeed: " + rank.stderr_file.string());
    if (!out.problems.empty()) return;
    RankProcessSpec audit;
    audit.command = {self_.string(),  "audit",  "--config",
                     config.string(), "--json", (dir / "audit.json").string()};
    for (std::uint32_t r = 0; r < options_.ranks; ++r)
      audit.command.push_back((dir / ("ledger-" + std::to_string(r) + ".jsonl")).string());
    audit.output_dir = dir / "audit";
    fs::create_directories(audit.output_dir);
    auto auditor = start_ranks(audit);
    wait_for_ranks(auditor, std::chrono::steady_clock::time_point::max());
    const std::string why = "ledger audit failed: " + (audit.output_dir / "rank0.out").string() +
                            ", " + (audit.output_dir / "rank0.err").string();
    // Exit 2: a ledger unreadable, and no report.
    if (auditor.front().exit_code == 2) return out.problems.push_back(why);
    const auto report = nlohmann::json::parse(read_text(dir / "audit.json"), nullptr, false);
    if (report.is_discarded() || !report.contains("epochs") || report["epochs"].empty())
      return out.problems.push_back(why + " (no readable report, or no epoch in it)");
    const auto count = [](const nlohmann::json& epoch, const char* key) {
      const auto found = epoch.find(key);
      return found != epoch.end() && found->is_number() ? found->get<std::uint64_t>() : 0;
    };
    for (const auto& epoch : report["epochs"]) {
      const auto accounted = count(epoch, "emitted") + count(epoch, "rejected");
      const auto expected = count(epoch, "expected");
      if (expected > accounted) out.lost += expected - accounted;
      out.audit_problems += count(epoch, "problems");
      if (!epoch.value("ok", false) && count(epoch, "problems") == 0) ++out.audit_problems;
    }
    if (auditor.front().exit_code != 0 || !report.value("ok", false) || out.audit_problems > 0 ||
        out.lost > 0)
      out.problems.push_back(why);
  }

  // Every hostile record (ids 0 to n - 1) is rejected as malformed JSON.
  void check_hostile_rejected(const fs::path& dir, RunOutcome& out) const {
    std::map<std::uint64_t, std::string> reasons;
    for (std::uint32_t r = 0; r < options_.ranks; ++r) {
      std::ifstream in(dir / ("ledger-" + std::to_string(r) + ".jsonl"));
      for (std::string line; std::getline(in, line);) {
        const auto entry = nlohmann::json::parse(line, nullptr, false);
        if (entry.is_object() && entry.value("kind", "") == "rejected")
          reasons[entry.at("id").get<std::uint64_t>()] = entry.value("reason", "");
      }
    }
    for (std::uint64_t id = 0; id < hostile_lines().size(); ++id) {
      const auto found = reasons.find(id);
      if (found == reasons.end() || found->second != "malformed_json")
        out.problems.push_back(
            "hostile record " + std::to_string(id) + " (" + hostile_lines()[id] + ") was " +
            (found == reasons.end() ? "not rejected" : "rejected as " + found->second) +
            ", expected malformed_json");
    }
  }

  const StressOptions& options_;
  fs::path self_;
  AbortTiming timing_;
  const PipelineConfig& config_;
};

void print_run(const RunOutcome& run) {
  std::cout << "run " << run.index << ": " << run.injection.text()
            << (run.injection.fault && !run.injected ? " (not reached)" : "") << ": ";
  if (run.must_fail && run.injection.fault)
    std::cout << "the others failed within " << run.max_abort_ms.value_or(-1) << " ms (bound "
              << run.bound.count() << " ms)";
  else if (run.must_fail)
    std::cout << "every rank failed at round 0";
  else if (run.problems.empty())
    std::cout << "every rank succeeded, " << run.lost << " samples lost";
  else
    std::cout << "expected success";
  std::cout << ", " << std::fixed << std::setprecision(1) << run.seconds << " s";
  for (const auto& problem : run.problems) std::cout << "\n  PROBLEM: " << problem;
  std::cout << '\n';
}

struct KindRow {
  std::uint32_t runs = 0;
  std::uint32_t injected = 0;
  std::optional<long long> max_abort_ms;
  milliseconds bound{0};
  std::uint32_t problems = 0;
};

Report summarize(const std::vector<RunOutcome>& runs, const StressOptions& options) {
  std::map<std::string, KindRow> rows;
  std::uint32_t hangs = 0, over_bound = 0, problem_runs = 0, unnamed = 0, beside = 0;
  std::uint64_t lost = 0, audit_problems = 0;
  std::optional<long long> max_abort;
  for (const auto& run : runs) {
    auto& row = rows[run.injection.kind()];
    ++row.runs;
    if (run.injected) ++row.injected;
    if (run.max_abort_ms) {
      row.max_abort_ms = std::max(row.max_abort_ms.value_or(*run.max_abort_ms), *run.max_abort_ms);
      max_abort = std::max(max_abort.value_or(*run.max_abort_ms), *run.max_abort_ms);
    }
    row.bound = std::max(row.bound, run.bound);
    row.problems += static_cast<std::uint32_t>(run.problems.size());
    over_bound += run.over_bound;
    hangs += run.hang ? 1 : 0;
    lost += run.lost;
    unnamed += run.unnamed_causes;
    beside += run.success_beside_failure;
    audit_problems += run.audit_problems;
    problem_runs += run.problems.empty() ? 0 : 1;
  }
  std::cout << "\n"
            << std::left << std::setw(19) << "fault" << std::right << std::setw(6) << "runs"
            << std::setw(10) << "injected" << std::setw(15) << "max abort ms" << std::setw(11)
            << "bound ms" << std::setw(10) << "problems" << '\n';
  Report kinds = Report::object();
  for (const auto& [kind, row] : rows) {
    std::cout << std::left << std::setw(19) << kind << std::right << std::setw(6) << row.runs
              << std::setw(10) << row.injected << std::setw(15)
              << (row.max_abort_ms ? std::to_string(*row.max_abort_ms) : "-") << std::setw(11)
              << (row.bound.count() ? std::to_string(row.bound.count()) : "-") << std::setw(10)
              << row.problems << '\n';
    kinds[kind] = {{"runs", row.runs},
                   {"injected", row.injected},
                   {"max_abort_ms", row.max_abort_ms ? Report(*row.max_abort_ms) : Report()},
                   {"bound_ms", row.bound.count()},
                   {"problems", row.problems}};
  }
  std::cout << "runs " << runs.size() << ", ranks " << options.ranks << ", hangs " << hangs
            << ", lost samples " << lost << ", aborts over the bound " << over_bound
            << ", unnamed causes " << unnamed << ", successes beside a failure " << beside
            << ", audit problems " << audit_problems << ", max time to abort "
            << (max_abort ? std::to_string(*max_abort) + " ms" : std::string("-"))
            << ", runs with problems " << problem_runs << '\n';
  Report report = command_report("stress");
  report.update(Report{{"runs", runs.size()},
                       {"ranks", options.ranks},
                       {"seed", options.seed},
                       {"faults", options.faults},
                       {"slack_ms", options.slack.count()},
                       {"hangs", hangs},
                       {"lost_samples", lost},
                       {"aborts_over_bound", over_bound},
                       {"unnamed_causes", unnamed},
                       {"successes_beside_failure", beside},
                       {"audit_problems", audit_problems},
                       {"max_abort_ms", max_abort ? Report(*max_abort) : Report()},
                       {"runs_with_problems", problem_runs},
                       {"by_fault", std::move(kinds)}});
  return report;
}

}  // namespace

int run_stress_command(const StressOptions& given) {
  StressOptions options = given;
  std::vector<StressKind> kinds;
  AbortTiming timing;
  std::optional<PipelineConfig> config;
  try {
    if (options.runs == 0 || options.ranks < 2)
      throw std::invalid_argument("--runs must be at least 1 and --ranks at least 2");
    kinds = parse_kinds(options.faults);
    config = PipelineConfig::from_toml_file(options.config);
    timing = {config->distributed.heartbeat_interval, config->distributed.peer_timeout,
              config->flow.round_timeout, config->distributed.store_timeout};
    if (options.dir.empty()) {
      std::string pattern = (fs::temp_directory_path() / "odbatch-stress-XXXXXX").string();
      if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create " + pattern);
      options.dir = pattern;
    }
    options.config = fs::absolute(options.config);
  } catch (const std::exception& e) {
    std::cerr << "odbatch stress: " << e.what() << '\n';
    return 2;
  }
  std::cout << "odbatch stress: " << options.runs << " runs of " << options.ranks
            << " ranks, faults " << options.faults << (options.each ? " in turn" : "") << ", seed "
            << options.seed << ", logs in " << options.dir.string() << '\n';

  StressRun stress(options, fs::read_symlink("/proc/self/exe"), timing, *config);
  std::vector<RunOutcome> runs;
  try {
    runs.push_back(stress.run(0, Injection{}, options.run_timeout));
    print_run(runs.back());
    const std::uint64_t rounds = rounds_in_ledgers(options.dir / "run0", options.ranks);
    // A run with a fault may take as long as one without, plus the fault's own delay and bound.
    const auto clean_time = milliseconds(static_cast<long long>(runs.front().seconds * 1000));
    SplitMix64 rng(options.seed);
    for (std::uint32_t index = 1; index < options.runs; ++index) {
      Injection injection;
      if (!kinds.empty() && rounds > 0) {
        const StressKind kind =
            kinds[options.each ? (index - 1) % kinds.size() : rng.next() % kinds.size()];
        if (const auto* fault = std::get_if<FaultKind>(&kind))
          injection.fault = random_fault(rng, std::span(fault, 1), options.ranks, rounds, timing);
        else
          injection.input = std::get<InputFault>(kind);
        if (injection.input == InputFault::config_divergence)
          injection.rank = static_cast<std::uint32_t>(rng.next() % options.ranks);
      }
      milliseconds hang_after = options.run_timeout;
      if (injection.fault)
        hang_after = 2 * clean_time + injection.fault->duration +
                     exit_bound(*injection.fault, timing, true) + options.slack +
                     milliseconds(30'000);
      else if (injection.input)
        hang_after = 2 * clean_time + exit_bound(FaultSpec{}, timing, true) + options.slack +
                     milliseconds(30'000);
      runs.push_back(stress.run(index, injection, hang_after));
      print_run(runs.back());
    }
  } catch (const std::exception& e) {
    // The inputs of a run could not be made (a config whose [source] cannot be varied, a full
    // disk): the matrix cannot run as asked.
    std::cerr << "odbatch stress: " << e.what() << '\n';
    return 2;
  }
  Report report = summarize(runs, options);
  if (options.json) {
    std::ofstream out(*options.json, std::ios::binary);
    if (!(out << to_readable_json(report))) {
      std::cerr << "odbatch stress: " << options.json->string() << ": cannot write the report\n";
      return 2;
    }
  }
  return report["runs_with_problems"].get<std::uint32_t>() == 0 ? 0 : 1;
}

}  // namespace odbatch::cli
