// Shards smaller than the first round: fewer accepted samples than the window (some records
// rejected), and an empty shard on one of several ranks. The first round's threshold is never
// reached, so the lookahead gate must open at the shard's end; every epoch must finish with each
// record emitted or rejected once. A watchdog aborts the pipelines, failing the test, if an
// epoch does not end.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr auto kEpochDeadline = std::chrono::seconds(120);

// Calls `on_expiry` unless destroyed first.
class Watchdog {
 public:
  explicit Watchdog(std::function<void()> on_expiry)
      : thread_([this, on_expiry = std::move(on_expiry)] {
          std::unique_lock lock(mutex_);
          if (!cancelled_.wait_for(lock, kEpochDeadline, [this] { return done_; })) on_expiry();
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cancelled_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cancelled_;
  bool done_ = false;
  std::thread thread_;
};

const std::string kAbortReason = "the epoch did not end within the watchdog's deadline";

TEST_CASE("a shard with fewer accepted samples than the window finishes its epoch") {
  test::require_dataset();
  const test::TempDir dir;
  const auto records = test::text_records(20);
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, records);
  {
    std::ofstream out(file, std::ios::app);
    out << "{\"messages\": [\n"
        << "not json at all\n";
  }
  const std::size_t lines = records.size() + 2;

  for (std::uint32_t lookahead : {0u, 64u}) {
    CAPTURE(lookahead);
    auto config = test::small_config({file});
    config.flow.lookahead = lookahead;
    REQUIRE(config.batching.window > lines);
    const auto ledger = dir.path() / ("ledger-" + std::to_string(lookahead) + ".jsonl");
    Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger});
    pipeline.start_epoch(0);
    std::vector<std::shared_ptr<const Batch>> batches;
    {
      const Watchdog watchdog([&] { pipeline.abort(kAbortReason); });
      batches = test::drain(pipeline);
    }
    REQUIRE(!batches.empty());
    const auto written = test::read_ledger(ledger, 0);
    CHECK(written.end_steps == batches.size());
    std::size_t emitted = 0;
    for (const auto& step : written.steps) emitted += step.size();
    CHECK(emitted == records.size());
    CHECK(written.rejected.size() == lines - records.size());
  }
}

TEST_CASE("a rank with an empty shard runs IDLE steps beside the others") {
  test::require_dataset();
  const test::TempDir dir;
  constexpr std::uint32_t kWorld = 3;
  const auto records = test::text_records(2);  // three contiguous shards: one of them empty
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, records);
  auto config = test::small_config({file});
  config.source.shuffle = false;

  const auto group = InprocGroup::create(kWorld);
  std::vector<std::unique_ptr<Pipeline>> pipelines;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    pipelines.push_back(std::make_unique<Pipeline>(config, DistEnv::inproc(group, rank, kWorld)));
  std::vector<std::vector<std::shared_ptr<const Batch>>> batches(kWorld);
  std::vector<std::string> errors(kWorld);
  {
    const Watchdog watchdog([&] {
      for (auto& pipeline : pipelines) pipeline->abort(kAbortReason);
    });
    std::vector<std::thread> threads;
    for (std::uint32_t rank = 0; rank < kWorld; ++rank)
      threads.emplace_back([&, rank] {
        try {
          pipelines[rank]->start_epoch(0);
          batches[rank] = test::drain(*pipelines[rank]);
        } catch (const std::exception& e) {
          errors[rank] = e.what();
        }
      });
    for (auto& thread : threads) thread.join();
  }
  std::size_t samples = 0;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    REQUIRE_MESSAGE(errors[rank].empty(), errors[rank]);
    REQUIRE(batches[rank].size() == batches[0].size());
    for (const auto& batch : batches[rank]) samples += batch->step_info().samples;
  }
  REQUIRE(!batches[0].empty());
  CHECK(samples == records.size());
  // The empty shard's rank trains on nothing: all its steps are IDLE.
  std::uint32_t idle_ranks = 0;
  for (const auto& rank_batches : batches)
    idle_ranks += std::all_of(rank_batches.begin(), rank_batches.end(),
                              [](const auto& batch) { return batch->step_info().idle; });
  CHECK(idle_ranks == 1);
}

}  // namespace
}  // namespace odbatch
