#include "stress_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "json_output.hpp"
#include "odbatch/core/fault_spec.hpp"
#include "odbatch/runtime/config_file_error.hpp"
#include "odbatch/runtime/local_launcher.hpp"
#include "odbatch/runtime/pipeline_config.hpp"
#include "rank_processes.hpp"

namespace odbatch::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::vector<FaultKind> parse_kinds(const std::string& text) {
  if (text == "random") {
    const auto all = all_fault_kinds();
    return {all.begin(), all.end()};
  }
  if (text == "none") return {};
  std::vector<FaultKind> kinds;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto all = all_fault_kinds();
    const auto found =
        std::find_if(all.begin(), all.end(), [&](FaultKind k) { return to_string(k) == item; });
    if (found == all.end())
      throw std::invalid_argument("--faults: unknown fault kind '" + item + "'");
    kinds.push_back(*found);
  }
  if (kinds.empty()) throw std::invalid_argument("--faults: no fault kind given");
  return kinds;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether `text` has `phrase` not followed by another digit ("rank 1" is not in "rank 12").
bool mentions(const std::string& text, const std::string& phrase) {
  for (auto at = text.find(phrase); at != std::string::npos; at = text.find(phrase, at + 1)) {
    const auto next = at + phrase.size();
    if (next == text.size() || !std::isdigit(static_cast<unsigned char>(text[next])) ||
        !std::isdigit(static_cast<unsigned char>(phrase.back())))
      return true;
  }
  return false;
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

struct RunOutcome {
  std::uint32_t index = 0;
  std::optional<FaultSpec> fault;
  bool injected = false;
  bool must_fail = false;
  bool hang = false;
  std::optional<long long> max_abort_ms;  // of the ranks other than the faulted one
  milliseconds bound{0};                  // the largest of theirs
  std::uint32_t over_bound = 0;
  std::uint64_t lost = 0;
  double seconds = 0;
  std::vector<std::string> problems;
};

class StressRun {
 public:
  StressRun(const StressOptions& options, const fs::path& self, const AbortTiming& timing)
      : options_(options), self_(self), timing_(timing) {}

  RunOutcome run(std::uint32_t index, const std::optional<FaultSpec>& fault,
                 milliseconds hang_after) {
    RunOutcome out;
    out.index = index;
    out.fault = fault;
    const fs::path dir = options_.dir / ("run" + std::to_string(index));
    fs::remove_all(dir);
    fs::create_directories(dir);

    RankProcessSpec spec;
    spec.command = {self_.string(),           "run",      "--no-progress",
                    options_.config.string(), "--ledger", (dir / "ledger-{rank}.jsonl").string()};
    spec.world_size = options_.ranks;
    spec.master_port = free_tcp_port(spec.master_addr);
    spec.output_dir = dir;
    spec.extra_environment["ODBATCH_RUN_ID"] = "stress-" + std::to_string(index);
    if (fault) spec.extra_environment["ODBATCH_FAULT"] = to_string(*fault);

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

    std::optional<long long> fault_ms;
    if (fault) fault_ms = injection_time(read_text(ranks[fault->rank].stderr_file));
    out.injected = fault_ms.has_value();
    out.must_fail = out.injected && fault_fails_run(*fault, timing_);
    // Faults are placed among run 0's rounds, which every run has: one never injected means the
    // injector is broken.
    if (fault && !out.injected && !out.hang)
      out.problems.push_back("the fault was never injected: " +
                             ranks[fault->rank].stderr_file.string());
    if (out.must_fail)
      check_failure(*fault, *fault_ms, ranks, out);
    else if (!out.hang)
      check_success(dir, ranks, out);
    return out;
  }

 private:
  void check_failure(const FaultSpec& fault, long long fault_ms,
                     const std::vector<RankProcess>& ranks, RunOutcome& out) const {
    const std::string culprit = fault.kind == FaultKind::store_unreachable
                                    ? std::string("store")
                                    : "rank " + std::to_string(fault.rank);
    for (const auto& rank : ranks) {
      const std::string who = "rank " + std::to_string(rank.rank);
      if (!rank.exited) continue;  // a hang, reported as such
      if (rank.exit_code == 0) out.problems.push_back(who + " claimed success");
      if (rank.rank == fault.rank) continue;
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
      const std::string error = read_text(rank.stderr_file);
      if (!mentions(error, culprit) || !mentions(error, "round "))
        out.problems.push_back(who + "'s error names neither the " + culprit +
                               " nor a round: " + rank.stderr_file.string());
    }
  }

  void check_success(const fs::path& dir, const std::vector<RankProcess>& ranks,
                     RunOutcome& out) const {
    for (const auto& rank : ranks)
      if (rank.exit_code != 0)
        out.problems.push_back("rank " + std::to_string(rank.rank) + " failed (exit " +
                               std::to_string(rank.exit_code) +
                               ") without a fault: " + rank.stderr_file.string());
    if (!out.problems.empty()) return;
    RankProcessSpec audit;
    audit.command = {self_.string(),           "audit",  "--config",
                     options_.config.string(), "--json", (dir / "audit.json").string()};
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
    if (report.is_discarded() || !report.contains("epochs"))
      return out.problems.push_back(why + " (no readable report)");
    const auto count = [](const nlohmann::json& epoch, const char* key) {
      const auto found = epoch.find(key);
      return found != epoch.end() && found->is_number() ? found->get<std::uint64_t>() : 0;
    };
    for (const auto& epoch : report["epochs"]) {
      const auto accounted = count(epoch, "emitted") + count(epoch, "rejected");
      const auto expected = count(epoch, "expected");
      if (expected > accounted) out.lost += expected - accounted;
    }
    if (auditor.front().exit_code != 0 || !report.value("ok", false)) out.problems.push_back(why);
  }

  const StressOptions& options_;
  fs::path self_;
  AbortTiming timing_;
};

std::string fault_text(const RunOutcome& run) {
  if (!run.fault) return "none";
  return to_string(*run.fault) + (run.injected ? "" : " (not reached)");
}

void print_run(const RunOutcome& run) {
  std::cout << "run " << run.index << ": " << fault_text(run) << ": ";
  if (run.must_fail)
    std::cout << "the others failed within " << run.max_abort_ms.value_or(-1) << " ms (bound "
              << run.bound.count() << " ms)";
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
  std::uint32_t hangs = 0, over_bound = 0, problem_runs = 0;
  std::uint64_t lost = 0;
  std::optional<long long> max_abort;
  for (const auto& run : runs) {
    auto& row = rows[run.fault ? std::string(to_string(run.fault->kind)) : "none"];
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
            << ", max time to abort "
            << (max_abort ? std::to_string(*max_abort) + " ms" : std::string("-"))
            << ", runs with problems " << problem_runs << '\n';
  return {{"runs", runs.size()},
          {"ranks", options.ranks},
          {"seed", options.seed},
          {"faults", options.faults},
          {"slack_ms", options.slack.count()},
          {"hangs", hangs},
          {"lost_samples", lost},
          {"aborts_over_bound", over_bound},
          {"max_abort_ms", max_abort ? Report(*max_abort) : Report()},
          {"runs_with_problems", problem_runs},
          {"by_fault", std::move(kinds)}};
}

}  // namespace

int run_stress_command(const StressOptions& given) {
  StressOptions options = given;
  std::vector<FaultKind> kinds;
  AbortTiming timing;
  try {
    if (options.runs == 0 || options.ranks < 2)
      throw std::invalid_argument("--runs must be at least 1 and --ranks at least 2");
    kinds = parse_kinds(options.faults);
    const auto config = PipelineConfig::from_toml_file(options.config);
    timing = {config.distributed.heartbeat_interval, config.distributed.peer_timeout,
              config.flow.round_timeout, config.distributed.store_timeout};
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

  StressRun stress(options, fs::read_symlink("/proc/self/exe"), timing);
  std::vector<RunOutcome> runs;
  runs.push_back(stress.run(0, std::nullopt, options.run_timeout));
  print_run(runs.back());
  const std::uint64_t rounds = rounds_in_ledgers(options.dir / "run0", options.ranks);
  // A run with a fault may take as long as one without, plus the fault's own delay and bound.
  const auto clean_time = milliseconds(static_cast<long long>(runs.front().seconds * 1000));
  SplitMix64 rng(options.seed);
  for (std::uint32_t index = 1; index < options.runs; ++index) {
    std::optional<FaultSpec> fault;
    if (!kinds.empty() && rounds > 0) {
      const std::span<const FaultKind> choice =
          options.each ? std::span<const FaultKind>(&kinds[(index - 1) % kinds.size()], 1)
                       : std::span<const FaultKind>(kinds);
      fault = random_fault(rng, choice, options.ranks, rounds, timing);
    }
    const milliseconds hang_after = fault ? 2 * clean_time + fault->duration +
                                                exit_bound(*fault, timing, true) + options.slack +
                                                milliseconds(30'000)
                                          : options.run_timeout;
    runs.push_back(stress.run(index, fault, hang_after));
    print_run(runs.back());
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
