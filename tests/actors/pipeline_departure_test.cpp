// Announced departures (PROTOCOL.md §Failures): ranks that stop at an agreed step, as at
// max_steps, leave without failing, however far apart their trainers are; ranks that disagree on
// the step fail, naming it. Three ranks as threads of one process (the in-process collective).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::uint32_t kWorld = 3;

PipelineConfig departure_config(const std::filesystem::path& file) {
  auto config = test::small_config({file});
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 16;
  config.tokenizer.workers = 1;
  config.flow.scheduler_threads = 1;
  config.flow.round_timeout = std::chrono::seconds(30);
  return config;
}

struct Departing {
  std::uint64_t steps = 0;  // batches this rank takes before it departs
  std::chrono::milliseconds per_batch{0};
};

struct Outcome {
  std::uint64_t taken = 0;
  std::string ledger_last_line;
  std::string error;  // of depart(), empty when it returned
  bool restart_refused = false;
};

// Three ranks over 240 text records, each taking its number of batches and then departing.
std::vector<Outcome> run_departures(const std::vector<Departing>& ranks,
                                    std::atomic<int>& hooks_called) {
  test::require_dataset();
  const test::TempDir dir;
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, test::text_records(240));
  const auto config = departure_config(file);
  const auto group = InprocGroup::create(kWorld);
  std::vector<Outcome> outcomes(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      auto& outcome = outcomes[rank];
      const auto ledger = dir.path() / ("ledger-" + std::to_string(rank) + ".jsonl");
      PipelineOptions options;
      options.ledger = ledger;
      options.on_abort = [&](const std::string&) { ++hooks_called; };
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld), options);
        pipeline.start_epoch(0);
        while (outcome.taken < ranks[rank].steps && pipeline.next_batch()) {
          ++outcome.taken;
          std::this_thread::sleep_for(ranks[rank].per_batch);
        }
        try {
          pipeline.depart();
        } catch (const std::exception& e) {
          outcome.error = e.what();
        }
        try {
          pipeline.start_epoch(1);
        } catch (const std::logic_error&) {
          outcome.restart_refused = true;
        }
      } catch (const std::exception& e) {
        outcome.error = std::string("outside depart(): ") + e.what();
      }
      std::ifstream lines(ledger);
      for (std::string line; std::getline(lines, line);) outcome.ledger_last_line = line;
    });
  for (auto& thread : threads) thread.join();
  return outcomes;
}

TEST_CASE("ranks departing at an agreed step leave without failing, a slow one included") {
  std::atomic<int> hooks_called{0};
  // Rank 2's trainer is slow: the others wait for it at the departure, their rounds ahead of it.
  const auto outcomes = run_departures({{6, std::chrono::milliseconds(0)},
                                        {6, std::chrono::milliseconds(0)},
                                        {6, std::chrono::milliseconds(150)}},
                                       hooks_called);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK(outcomes[rank].taken == 6);
    CHECK_MESSAGE(outcomes[rank].error.empty(), outcomes[rank].error);
    CHECK(outcomes[rank].restart_refused);
    // The ledger ends with the departure, after every step the pipeline prepared.
    CHECK(outcomes[rank].ledger_last_line == R"({"epoch":0,"kind":"departed","steps":6})");
  }
  CHECK(hooks_called == 0);
}

TEST_CASE("ranks departing at different steps fail, naming the steps, and call the hook") {
  std::atomic<int> hooks_called{0};
  const auto outcomes = run_departures({{3, std::chrono::milliseconds(0)},
                                        {5, std::chrono::milliseconds(0)},
                                        {5, std::chrono::milliseconds(0)}},
                                       hooks_called);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK_MESSAGE(outcomes[rank].error.find("rank 0 departs at step 3 of epoch 0 but rank 1 at "
                                            "step 5 of epoch 0") != std::string::npos,
                  outcomes[rank].error);
  }
  CHECK(hooks_called == static_cast<int>(kWorld));
}

}  // namespace
}  // namespace odbatch
