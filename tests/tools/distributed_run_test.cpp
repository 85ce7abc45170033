// `odbatch run` with ranks that are processes over loopback (the store on rank 0, Gloo between
// the ranks): the same batches as the in-process backend with the same world size, and faults
// (a rank stopped or killed mid-epoch) that make every surviving rank fail fast, naming the rank
// and the round, with no process left running. In-process ranks get injected faults through
// PipelineOptions::collective; `odbatch run` through ODBATCH_FAULT.
#include <doctest/doctest.h>
#include <signal.h>

#include <numeric>
#include <set>
#include <thread>

#include "cli_test_support.hpp"
#include "odbatch/dist/fault_injecting_collective.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/dist/local_launcher.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const auto dir = test::scratch().path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A pipeline TOML over `records`: small windows and budgets, so that an epoch has many rounds.
fs::path write_config(const fs::path& dir, const std::vector<test::SftRecord>& records,
                      const std::string& extra) {
  const auto data = fs::path(ODBATCH_DATA_DIR);
  test::write_jsonl(dir / "records.jsonl", records);
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", data)
       << "[images]\nworkers = 1\nmax_pixels = 200704\n"
       << "[batching]\ntoken_budget = 1024\nmax_seq_len = 1024\nwindow = 16\nseed = 5\n"
       << "[pipeline]\nscheduler_threads = 2\nround_timeout_ms = 120000\n"
       << extra;
  return test::scratch().write(dir.filename().string() + ".toml", toml.str());
}

std::vector<test::SftRecord> mixed_records(std::size_t text, std::size_t images) {
  auto records = test::text_records(text);
  const auto with_images = test::image_records(images, /*wallpapers=*/false);
  records.insert(records.end(), with_images.begin(), with_images.end());
  return records;
}

std::set<SampleId> rejected_ids(const test::LedgerContents& ledger) {
  std::set<SampleId> ids;
  for (const auto& r : ledger.rejected) ids.insert(r.id);
  return ids;
}

TEST_CASE("four processes over Gloo emit what four in-process ranks emit") {
  test::require_dataset();
  constexpr std::uint32_t kWorld = 4;
  const auto dir = fresh_dir("gloo_vs_inproc");
  const auto config_file =
      write_config(dir, mixed_records(480, 40), "[distributed]\nheartbeat_interval_ms = 200\n");

  const auto launched =
      test::run_cli("launch --nproc 4 -- " + test::shell_quoted(ODBATCH_CLI_PATH) +
                    " run --no-progress " + test::shell_quoted(config_file) + " --ledger " +
                    test::shell_quoted(dir / "gloo-{rank}.jsonl"));
  REQUIRE_MESSAGE(launched.status == 0, launched.err);

  const auto config = PipelineConfig::from_toml_file(config_file);
  const auto group = InprocGroup::create(kWorld);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kWorld);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld),
                          PipelineOptions{dir / ("inproc-" + std::to_string(rank) + ".jsonl")});
        pipeline.start_epoch(0);
        test::drain(pipeline);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();

  std::size_t steps = 0;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    REQUIRE_MESSAGE(errors[rank].empty(), errors[rank]);
    const auto gloo = test::read_ledger(dir / ("gloo-" + std::to_string(rank) + ".jsonl"), 0);
    const auto inproc = test::read_ledger(dir / ("inproc-" + std::to_string(rank) + ".jsonl"), 0);
    CHECK(gloo.steps == inproc.steps);
    CHECK(gloo.end_steps == inproc.end_steps);
    CHECK(rejected_ids(gloo) == rejected_ids(inproc));
    steps = inproc.steps.size();
  }
  CHECK(steps > 10);  // many rounds, not one

  std::string ledgers;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    ledgers += " " + test::shell_quoted(dir / ("gloo-" + std::to_string(rank) + ".jsonl"));
  const auto audit =
      test::run_cli("audit" + ledgers + " --config " + test::shell_quoted(config_file));
  CHECK_MESSAGE(audit.status == 0, audit.out << audit.err);
}

TEST_CASE("three processes stopping at max_steps depart together, and the audit accepts it") {
  test::require_dataset();
  const auto dir = fresh_dir("max_steps");
  const auto config_file =
      write_config(dir, mixed_records(300, 0), "[distributed]\nheartbeat_interval_ms = 200\n");
  const auto launched =
      test::run_cli("launch --nproc 3 -- " + test::shell_quoted(ODBATCH_CLI_PATH) +
                    " run --no-progress --max-steps 7 " + test::shell_quoted(config_file) +
                    " --ledger " + test::shell_quoted(dir / "l-{rank}.jsonl"));
  REQUIRE_MESSAGE(launched.status == 0, launched.err);
  std::string ledgers;
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    const auto ledger = dir / ("l-" + std::to_string(rank) + ".jsonl");
    const auto text = test::read_file(ledger);
    CHECK_MESSAGE(text.ends_with("{\"epoch\":0,\"kind\":\"departed\",\"steps\":7}\n"), text);
    ledgers += " " + test::shell_quoted(ledger);
  }
  const auto audit =
      test::run_cli("audit" + ledgers + " --config " + test::shell_quoted(config_file));
  CHECK_MESSAGE(audit.status == 0, audit.out << audit.err);
  CHECK_MESSAGE(audit.out.find("not reached (the ranks departed)") != std::string::npos, audit.out);
  CHECK_MESSAGE(
      audit.out.find("steps before the departure: rank 0 7 rank 1 7 rank 2 7") != std::string::npos,
      audit.out);
}

// Saves the loader's state after 5 steps on `from` processes, resumes on `to`, and audits both
// runs' ledgers as one epoch.
void save_and_resume(std::uint32_t from, std::uint32_t to) {
  const auto dir = fresh_dir("resume_" + std::to_string(from) + "_" + std::to_string(to));
  const auto config_file =
      write_config(dir, mixed_records(300, 12), "[distributed]\nheartbeat_interval_ms = 200\n");
  const auto state = dir / "state.ckpt";
  const auto launch = [&](std::uint32_t ranks, const std::string& arguments) {
    return test::run_cli("launch --nproc " + std::to_string(ranks) + " -- " +
                         test::shell_quoted(ODBATCH_CLI_PATH) + " run --no-progress " +
                         test::shell_quoted(config_file) + " " + arguments);
  };
  const auto saved = launch(from, "--save-state-at 5 --state " + test::shell_quoted(state) +
                                      " --ledger " + test::shell_quoted(dir / "a-{rank}.jsonl"));
  REQUIRE_MESSAGE(saved.status == 0, saved.err);
  CHECK(fs::exists(state));
  CHECK_FALSE(fs::exists(dir / "state.ckpt.part-0"));
  const auto resumed = launch(to, "--resume " + test::shell_quoted(state) + " --ledger " +
                                      test::shell_quoted(dir / "b-{rank}.jsonl"));
  REQUIRE_MESSAGE(resumed.status == 0, resumed.err);
  std::string ledgers;
  for (std::uint32_t rank = 0; rank < from; ++rank)
    ledgers += " " + test::shell_quoted(dir / ("a-" + std::to_string(rank) + ".jsonl"));
  for (std::uint32_t rank = 0; rank < to; ++rank)
    ledgers += " " + test::shell_quoted(dir / ("b-" + std::to_string(rank) + ".jsonl"));
  const auto audit =
      test::run_cli("audit" + ledgers + " --config " + test::shell_quoted(config_file));
  CHECK_MESSAGE(audit.status == 0, audit.out << audit.err);
  CHECK_MESSAGE(audit.out.find("resumed at step 5 on " + std::to_string(to) + " rank(s)") !=
                    std::string::npos,
                audit.out);
  // A resumed run that claims to go on at step 7, where the first run departed at 5: the steps
  // in between never reached a trainer.
  std::string tampered = " " + test::shell_quoted(dir / "a-0.jsonl");
  for (std::uint32_t rank = 1; rank < from; ++rank)
    tampered += " " + test::shell_quoted(dir / ("a-" + std::to_string(rank) + ".jsonl"));
  for (std::uint32_t rank = 0; rank < to; ++rank) {
    auto text = test::read_file(dir / ("b-" + std::to_string(rank) + ".jsonl"));
    const std::string resumed_line = "\"kind\":\"resumed\",\"steps\":5";
    REQUIRE(text.find(resumed_line) != std::string::npos);
    text.replace(text.find(resumed_line), resumed_line.size(), "\"kind\":\"resumed\",\"steps\":7");
    tampered += " " + test::shell_quoted(test::scratch().write(
                          dir.filename().string() + "-t" + std::to_string(rank) + ".jsonl", text));
  }
  const auto report = dir / "tampered.json";
  const auto mismatch = test::run_cli("audit" + tampered + " --json " + test::shell_quoted(report));
  CHECK(mismatch.status == 1);
  const auto findings = test::read_file(report);
  CHECK_MESSAGE(
      findings.find("departed after 5 steps, the next run resumes at step 7") != std::string::npos,
      findings);
  // Without the first run's ledgers the epoch's beginning is missing.
  std::string resumed_only;
  for (std::uint32_t rank = 0; rank < to; ++rank)
    resumed_only += " " + test::shell_quoted(dir / ("b-" + std::to_string(rank) + ".jsonl"));
  const auto partial = test::run_cli("audit" + resumed_only);
  CHECK(partial.status == 1);
  CHECK(partial.out.find("no_beginning") != std::string::npos);
}

TEST_CASE("saved on four processes, resumed on two: the audit of both runs passes") {
  test::require_dataset();
  save_and_resume(4, 2);
}

TEST_CASE("saved on two processes, resumed on three: the audit of both runs passes") {
  test::require_dataset();
  save_and_resume(2, 3);
}

TEST_CASE("saved and resumed on two processes: the batches after the cut are the uncut run's") {
  test::require_dataset();
  const auto dir = fresh_dir("resume_same");
  const auto config_file = write_config(dir, mixed_records(300, 12), "");
  const auto launch = [&](const std::string& arguments) {
    return test::run_cli("launch --nproc 2 -- " + test::shell_quoted(ODBATCH_CLI_PATH) +
                         " run --no-progress " + test::shell_quoted(config_file) + " " + arguments);
  };
  REQUIRE(launch("--ledger " + test::shell_quoted(dir / "whole-{rank}.jsonl")).status == 0);
  REQUIRE(launch("--save-state-at 9 --state " + test::shell_quoted(dir / "s.ckpt") + " --ledger " +
                 test::shell_quoted(dir / "a-{rank}.jsonl"))
              .status == 0);
  REQUIRE(launch("--resume " + test::shell_quoted(dir / "s.ckpt") + " --ledger " +
                 test::shell_quoted(dir / "b-{rank}.jsonl"))
              .status == 0);
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    CAPTURE(rank);
    const auto whole = test::read_ledger(dir / ("whole-" + std::to_string(rank) + ".jsonl"), 0);
    const auto resumed = test::read_ledger(dir / ("b-" + std::to_string(rank) + ".jsonl"), 0);
    REQUIRE(whole.steps.size() > 9);
    const std::vector<std::vector<SampleId>> after(whole.steps.begin() + 9, whole.steps.end());
    CHECK(resumed.steps == after);
  }
}

// Three ranks started by a shell script, each with its own output files; `fault` is a shell
// command run 3 s in, with $victim set to rank 1's pid, and `after_survivors` one run once ranks 0
// and 2 have exited. Every rank's exit status and the milliseconds from the fault to its exit
// land in files.
struct FaultRun {
  fs::path dir;  // also holds each rank's flight recorder file
  std::vector<int> status;
  std::vector<long> ms_after_fault;
  std::vector<std::string> errors;
};

FaultRun run_with_fault(const std::string& name, const std::string& fault,
                        const std::string& after_survivors) {
  const auto dir = fresh_dir(name);
  // Slow workers stretch the epoch (about 10 s per rank) so that the fault lands mid-epoch.
  const auto config_file =
      write_config(dir, test::text_records(900),
                   "worker_jitter_us = 20000\n[distributed]\nheartbeat_interval_ms = 200\n"
                   "peer_timeout_ms = 2000\nflight_recorder_dir = \"" +
                       dir.string() + "\"\n");
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  std::ostringstream script;
  // Ranks 0 and 2 run in subshells that note their end; rank 1 is the odbatch process itself.
  const std::string rank_command = test::shell_quoted(ODBATCH_CLI_PATH) + " run --no-progress " +
                                   test::shell_quoted(config_file);
  script << "export MASTER_ADDR=127.0.0.1 MASTER_PORT=" << port << " ODBATCH_STORE_PORT=" << port
         << " WORLD_SIZE=3\n"
         << "cd " << test::shell_quoted(dir) << "\n"
         << "for r in 0 2; do\n"
         << "  (RANK=$r " << rank_command
         << " >out-$r 2>err-$r; echo $? >rc-$r; date +%s%N >end-$r) &\n"
         << "  pid[$r]=$!\ndone\n"
         << "RANK=1 " << rank_command << " >out-1 2>err-1 &\n"
         << "victim=$!\n"
         << "sleep 3\n"
         << "date +%s%N >fault\n"
         << fault << "\n"
         << "wait ${pid[0]} ${pid[2]}\n"
         << after_survivors << "\n"
         << "wait $victim; echo $? >rc-1; date +%s%N >end-1\n";
  const auto script_file = test::scratch().write(name + ".sh", script.str());
  REQUIRE(std::system(("bash " + test::shell_quoted(script_file)).c_str()) == 0);
  FaultRun run;
  run.dir = dir;
  const auto nanoseconds = [&](const std::string& file) {
    return std::stoll(test::read_file(dir / file));
  };
  for (int r = 0; r < 3; ++r) {
    const auto rank = std::to_string(r);
    run.status.push_back(std::stoi(test::read_file(dir / ("rc-" + rank))));
    run.ms_after_fault.push_back(
        static_cast<long>((nanoseconds("end-" + rank) - nanoseconds("fault")) / 1'000'000));
    run.errors.push_back(test::read_file(dir / ("err-" + rank)));
  }
  return run;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// peer_timeout + a heartbeat interval, plus generous room for a loaded machine: only a hang or a
// failure that waits for a long deadline (the exchange's, a store call's) exceeds it.
constexpr long kAbortBoundMs = 2000 + 200 + 8000;

TEST_CASE("a rank stopped mid-epoch: the others fail fast, naming it and the round") {
  test::require_dataset();
  // Rank 1 is stopped (as by SIGSTOP or a debugger) for longer than peer_timeout, then resumed.
  const auto run = run_with_fault("stopped_rank", "kill -STOP $victim", "kill -CONT $victim");
  for (int r : {0, 2}) {
    CAPTURE(r);
    CHECK(run.status[r] == 1);
    CHECK_MESSAGE(contains(run.errors[r], "rank 1 is dead"), run.errors[r]);
    CHECK_MESSAGE(contains(run.errors[r], " round "), run.errors[r]);
    CHECK(run.ms_after_fault[r] < kAbortBoundMs);
    MESSAGE("stopped rank: rank " << r << " failed " << run.ms_after_fault[r] << " ms after");
  }
  // The resumed rank finds its store gone (rank 0 stopped serving once the others had left, or
  // peer_timeout after the abort): it fails too, it never succeeds.
  CHECK(run.status[1] == 1);
  CHECK_MESSAGE(contains(run.errors[1], "pipeline failed"), run.errors[1]);
}

TEST_CASE("a rank killed mid-epoch: the others fail fast, naming it and the round") {
  test::require_dataset();
  const auto run = run_with_fault("killed_rank", "kill -KILL $victim", "");
  CHECK(run.status[1] == 128 + SIGKILL);
  for (int r : {0, 2}) {
    CAPTURE(r);
    CHECK(run.status[r] == 1);
    CHECK_MESSAGE(contains(run.errors[r], "rank 1"), run.errors[r]);
    CHECK_MESSAGE(contains(run.errors[r], " round "), run.errors[r]);
    CHECK(run.ms_after_fault[r] < kAbortBoundMs);
    MESSAGE("killed rank: rank " << r << " failed " << run.ms_after_fault[r] << " ms after");
    // The flight recorder's file, named in the error, ends with the failed round.
    const auto recorder_file = run.dir / ("odbatch-flight-rank" + std::to_string(r) + ".json");
    CHECK(contains(run.errors[r], "last rounds: " + recorder_file.string()));
    const auto rounds = nlohmann::json::parse(test::read_file(recorder_file))["rounds"];
    REQUIRE(rounds.size() > 1);
    CHECK(contains(rounds.back()["failure"].get<std::string>(), "rank 1"));
    CHECK(!rounds.front().contains("failure"));
  }
}

TEST_CASE("a fault injected through PipelineOptions::collective fails every in-process rank") {
  test::require_dataset();
  constexpr std::uint32_t kWorld = 3;
  const auto dir = fresh_dir("inproc_fault");
  const auto config = PipelineConfig::from_toml_file(
      write_config(dir, mixed_records(300, 0),
                   "[distributed]\nflight_recorder_dir = \"" + dir.string() + "\"\n"));
  const auto group = InprocGroup::create(kWorld);
  PipelineOptions options;
  options.collective =
      round_collective_with_fault(FaultSpec{FaultKind::corrupt, /*rank=*/1, /*round=*/2});
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kWorld);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld), options);
        pipeline.start_epoch(0);
        test::drain(pipeline);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK_MESSAGE(contains(errors[rank], "round 2: malformed proposal from rank 1"), errors[rank]);
  }
}

TEST_CASE("odbatch run refuses a malformed ODBATCH_FAULT, naming it") {
  ::setenv("ODBATCH_FAULT", "kind=kill", 1);
  const auto run = test::run_cli("run --no-progress " +
                                 test::shell_quoted(test::scratch().path("never-read.toml")));
  ::unsetenv("ODBATCH_FAULT");
  CHECK(run.status == 2);
  CHECK_MESSAGE(contains(run.err, "ODBATCH_FAULT: fault spec: rank= is missing"), run.err);
}

}  // namespace
}  // namespace odbatch
