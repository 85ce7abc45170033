// What an aborted epoch's error says on every rank: the epoch that was running (after earlier
// epochs, or one chosen by start_epoch(n)), never another, and one flight recorder note, the
// rank's own (in-process ranks, with a corrupt proposal injected through
// PipelineOptions::collective). Where the flight recorder's file goes: the configured directory,
// else the user's state directory, said so in the message, else nowhere, saying why.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "odbatch/dist/fault_injecting_collective.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::uint32_t kWorld = 2;

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

struct Dataset {
  test::TempDir dir;
  PipelineConfig config;

  Dataset() {
    test::require_dataset();
    const auto file = dir.path() / "records.jsonl";
    test::write_jsonl(file, test::text_records(240));
    config = test::small_config({file});
    config.batching.token_budget = 1024;
    config.batching.max_seq_len = 1024;
    config.batching.window = 16;
    config.distributed.flight_recorder_dir = dir.path();
  }
};

// The exchanges (rounds) one epoch of the dataset takes on two ranks.
std::uint64_t rounds_per_epoch(const PipelineConfig& config) {
  const auto group = InprocGroup::create(kWorld);
  std::vector<std::uint64_t> rounds(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld));
      pipeline.start_epoch(0);
      test::drain(pipeline);
      rounds[rank] = pipeline.stats().round_latency.count;
    });
  for (auto& thread : threads) thread.join();
  return rounds[0];
}

// Runs `epochs` in order on two ranks, rank 1 sending a corrupt proposal in its exchange
// `fault_round` (counted over the run); what each rank's failure said and in which epoch.
struct Failure {
  std::string message;
  std::uint64_t epoch = 0;
};
std::vector<Failure> run_with_corrupt_proposal(const PipelineConfig& config,
                                               const std::vector<std::uint64_t>& epochs,
                                               std::uint64_t fault_round) {
  const auto group = InprocGroup::create(kWorld);
  PipelineOptions options;
  options.collective =
      round_collective_with_fault(FaultSpec{FaultKind::corrupt, /*rank=*/1, fault_round});
  std::vector<Failure> failures(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld), options);
      for (const auto epoch : epochs) {
        failures[rank].epoch = epoch;
        try {
          pipeline.start_epoch(epoch);
          test::drain(pipeline);
        } catch (const std::exception& e) {
          failures[rank].message = e.what();
          return;
        }
      }
    });
  for (auto& thread : threads) thread.join();
  return failures;
}

void check_names_epoch(const std::vector<Failure>& failures, std::uint64_t epoch,
                       const std::filesystem::path& recorder_dir) {
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    const auto& failure = failures[rank];
    INFO(failure.message);
    REQUIRE(!failure.message.empty());
    CHECK(failure.epoch == epoch);
    const std::string running = "epoch " + std::to_string(epoch);
    CHECK(occurrences(failure.message, "epoch ") ==
          occurrences(failure.message, running + " ") +
              occurrences(failure.message, running + ":"));
    CHECK(occurrences(failure.message, running) >= 1);
    CHECK(occurrences(failure.message, "malformed proposal from rank 1") >= 1);
    // One note of the flight recorder: this rank's own file.
    CHECK(occurrences(failure.message, "(last rounds: ") == 1);
    const auto own_file = recorder_dir / ("odbatch-flight-rank" + std::to_string(rank) + ".json");
    CHECK(occurrences(failure.message, own_file.string()) == 1);
  }
}

TEST_CASE("a failure in the second epoch names the second epoch on every rank") {
  const Dataset data;
  const auto rounds = rounds_per_epoch(data.config);
  REQUIRE(rounds > 2);
  const auto failures = run_with_corrupt_proposal(data.config, {0, 1, 2}, rounds + 1);
  check_names_epoch(failures, 1, data.dir.path());
}

TEST_CASE("a failure in the epoch start_epoch(3) chose names epoch 3 on every rank") {
  const Dataset data;
  const auto failures = run_with_corrupt_proposal(data.config, {3}, 2);
  check_names_epoch(failures, 3, data.dir.path());
}

// Sets or unsets environment variables for a scope, restoring them after.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    const char* before = ::getenv(name);
    saved_.push_back({name, before ? std::optional<std::string>(before) : std::nullopt});
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// One rank over records with a line that is not JSON, under on_bad_record = "fail": the epoch
// fails, and the error's message is returned.
std::string failed_epoch_message(PipelineConfig config, const std::filesystem::path& dir) {
  const auto file = dir / "with-bad-line.jsonl";
  test::write_jsonl(file, test::text_records(40));
  std::ofstream(file, std::ios::app) << "{not json\n";
  config.source.files = {file.string()};
  config.source.on_bad_record = BadRecordPolicy::fail;
  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  try {
    test::drain(pipeline);
  } catch (const PipelineFailure& e) {
    return e.what();
  }
  FAIL("the epoch did not fail");
  return {};
}

void check_recorder_file(const std::filesystem::path& file) {
  REQUIRE(std::filesystem::exists(file));
  std::ifstream in(file);
  const auto written = nlohmann::json::parse(in);
  CHECK(written["rank"] == 0);
  CHECK(written["rounds"].is_array());
}

TEST_CASE("the flight recorder writes into the configured directory, made if missing") {
  const Dataset data;
  auto config = data.config;
  config.distributed.flight_recorder_dir = data.dir.path() / "not" / "there";
  const auto message = failed_epoch_message(config, data.dir.path());
  INFO(message);
  const auto file = config.distributed.flight_recorder_dir / "odbatch-flight-rank0.json";
  CHECK(message.find("rank 0, epoch 0: sample ") == 0);
  CHECK(message.ends_with(" (last rounds: " + file.string() + ")"));
  check_recorder_file(file);
}

TEST_CASE("unconfigured, the flight recorder writes into the user's state directory and says so") {
  const Dataset data;
  auto config = data.config;
  config.distributed.flight_recorder_dir.clear();
  const auto state = data.dir.path() / "state";
  ScopedEnv env;
  env.set("XDG_STATE_HOME", state.c_str());
  const auto message = failed_epoch_message(config, data.dir.path());
  INFO(message);
  const auto file = state / "odbatch" / "flight" / "odbatch-flight-rank0.json";
  CHECK(message.ends_with(" (last rounds: " + file.string() +
                          ", the default directory; [distributed] flight_recorder_dir sets "
                          "another)"));
  check_recorder_file(file);

  // Without XDG_STATE_HOME (or with a relative one, which XDG says to ignore): ~/.local/state.
  const auto home = data.dir.path() / "home";
  env.set("XDG_STATE_HOME", "relative/state");
  env.set("HOME", home.c_str());
  const auto in_home = failed_epoch_message(config, data.dir.path());
  const auto home_file =
      home / ".local" / "state" / "odbatch" / "flight" / "odbatch-flight-rank0.json";
  CHECK_MESSAGE(in_home.find(" (last rounds: " + home_file.string() + ", the default directory") !=
                    std::string::npos,
                in_home);
  check_recorder_file(home_file);
}

TEST_CASE("unconfigured and without a home, the flight recorder writes nothing and says why") {
  const Dataset data;
  auto config = data.config;
  config.distributed.flight_recorder_dir.clear();
  ScopedEnv env;
  env.set("XDG_STATE_HOME", nullptr);
  env.set("HOME", nullptr);
  const auto message = failed_epoch_message(config, data.dir.path());
  CHECK_MESSAGE(message.ends_with(" (flight recorder not written: [distributed] "
                                  "flight_recorder_dir is unset, and neither XDG_STATE_HOME nor "
                                  "HOME names a default directory)"),
                message);
  CHECK(message.find("last rounds") == std::string::npos);
}

}  // namespace
}  // namespace odbatch
