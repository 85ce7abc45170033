// The trainer's wait keeps a deadline while this rank's stages are busy: a stage that never
// returns fails the epoch after pipeline.stall_timeout_ms, on its rank and its peers, naming what
// waits; a slow stage that keeps finishing items, and a rank waiting in a round for a peer whose
// trainer is busy, are not stalls.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/stage/stage.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;

// Holds the records a test names until it lets them go.
class Gate {
 public:
  explicit Gate(bool open = false) : open_(open) {}
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [&] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_;
};

// Sleeps `params.sleep_ms` on every record and, once its rank's workers have seen
// `params.hold_after` records (-1: never), stops on each further one until the gate opens.
class HoldRecord : public RecordStage {
 public:
  HoldRecord(Gate& gate, std::atomic<std::int64_t>& seen, std::int64_t hold_after,
             std::int64_t sleep_ms)
      : gate_(gate), seen_(seen), hold_after_(hold_after), sleep_ms_(sleep_ms) {}
  StageVerdict process(StageRecord&, StageContext&) override {
    if (hold_after_ >= 0 && seen_.fetch_add(1) >= hold_after_) gate_.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    return keep();
  }

 private:
  Gate& gate_;
  std::atomic<std::int64_t>& seen_;
  std::int64_t hold_after_;
  std::int64_t sleep_ms_;
};

// One rank's stage types: "hold", counting the records its workers see in `seen`.
PipelineOptions holding_stage(Gate& gate, std::atomic<std::int64_t>& seen) {
  PipelineOptions options;
  options.stages.add_record_stage("hold", "1", [&gate, &seen](const StageParams& params) {
    return std::make_unique<HoldRecord>(gate, seen, params.integer("hold_after"),
                                        params.integer("sleep_ms"));
  });
  return options;
}

PipelineConfig held_config(const std::filesystem::path& file, std::int64_t hold_after,
                           std::int64_t sleep_ms, std::chrono::milliseconds stall_timeout) {
  auto config = test::small_config({file});
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 16;
  config.flow.round_timeout = 60s;
  config.flow.stall_timeout = stall_timeout;
  config.distributed.flight_recorder_dir = file.parent_path();
  StageConfig hold;
  hold.name = "holder";
  hold.kind = StageKind::record;
  hold.type = "hold";
  hold.workers = 2;
  hold.params.set("hold_after", hold_after);
  hold.params.set("sleep_ms", sleep_ms);
  config.stages = {hold};
  return config;
}

// Takes batches until the epoch ends or fails; the failure, if any.
std::optional<PipelineFailure> run_to_failure(Pipeline& pipeline, std::size_t& taken,
                                              std::chrono::milliseconds per_batch = 0ms) {
  try {
    while (pipeline.next_batch()) {
      ++taken;
      std::this_thread::sleep_for(per_batch);
    }
  } catch (const PipelineFailure& failure) {
    return failure;
  }
  return std::nullopt;
}

// Runs `body(rank, dist)` on each of two in-process ranks, each on its own thread.
constexpr std::uint32_t kWorld = 2;
template <class Body>
void on_two_ranks(Body body) {
  const auto group = InprocGroup::create(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] { body(rank, DistEnv::inproc(group, rank, kWorld)); });
  for (auto& thread : threads) thread.join();
}

}  // namespace

TEST_CASE("a stage that never returns fails the epoch after stall_timeout, naming what waits") {
  test::require_dataset();
  const test::TempDir dir;
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, test::text_records(200));
  Gate gate;
  std::atomic<std::int64_t> seen{0};
  std::optional<PipelineFailure> failure;
  std::size_t taken = 0;
  {
    Pipeline pipeline(held_config(file, 40, 0, 400ms), DistEnv::single(),
                      holding_stage(gate, seen));
    pipeline.start_epoch(0);
    failure = run_to_failure(pipeline, taken);
    gate.open();  // a stage that never returns cannot be stopped: its worker is let go here
  }
  REQUIRE(failure.has_value());
  CHECK(failure->cause() == PipelineFailure::Cause::stalled);
  const std::string message = failure->what();
  CAPTURE(message);
  CHECK(message.rfind("rank 0, epoch 0: stalled: no stage of this rank finished anything for ",
                      0) == 0);
  CHECK(message.find(" ms while the trainer waited for a batch and this rank was not in a round "
                     "(pipeline.stall_timeout_ms); items waiting: reader_in_flight ") !=
        std::string::npos);
  CHECK(message.find("; items done: reader ") != std::string::npos);
  CHECK(message.find(" holder ") != std::string::npos);
}

TEST_CASE("with two ranks, one rank's stalled stage fails both, each naming the stalled rank") {
  test::require_dataset();
  const test::TempDir dir;
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, test::text_records(200));
  // Only rank 1 holds its records, after 20 (rank 0's gate is open: the ranks' stage settings
  // must agree); rank 0 keeps going until it waits in a round for rank 1.
  std::vector<Gate> gates(kWorld);
  gates[0].open();
  std::vector<std::atomic<std::int64_t>> seen(kWorld);
  std::vector<std::optional<PipelineFailure>> failures(kWorld);
  on_two_ranks([&](std::uint32_t rank, DistEnv dist) {
    Pipeline pipeline(held_config(file, 20, 0, 400ms), std::move(dist),
                      holding_stage(gates[rank], seen[rank]));
    pipeline.start_epoch(0);
    std::size_t taken = 0;
    failures[rank] = run_to_failure(pipeline, taken);
    gates[rank].open();
  });
  REQUIRE(failures[0].has_value());
  REQUIRE(failures[1].has_value());
  CHECK(failures[1]->cause() == PipelineFailure::Cause::stalled);
  CHECK(std::string(failures[1]->what()).rfind("rank 1, epoch 0: stalled: ", 0) == 0);
  CHECK(failures[0]->cause() == PipelineFailure::Cause::peer);
  CHECK(std::string(failures[0]->what()).find("rank 1, epoch 0: stalled: ") != std::string::npos);
}

TEST_CASE("a slow stage that keeps finishing items, and a rank waiting in a round, do not stall") {
  test::require_dataset();
  const test::TempDir dir;
  const auto file = dir.path() / "records.jsonl";
  test::write_jsonl(file, test::text_records(120));
  Gate never_used;
  std::vector<std::atomic<std::int64_t>> seen(kWorld);
  std::vector<std::optional<PipelineFailure>> failures(kWorld);
  std::vector<std::size_t> taken(kWorld);
  on_two_ranks([&](std::uint32_t rank, DistEnv dist) {
    // Each record takes 40 ms (about 10 stall timeouts for the whole epoch); rank 1's trainer
    // spends 8 stall timeouts on each batch, while rank 0 waits for it in a round.
    Pipeline pipeline(held_config(file, -1, 40, 100ms), std::move(dist),
                      holding_stage(never_used, seen[rank]));
    pipeline.start_epoch(0);
    failures[rank] = run_to_failure(pipeline, taken[rank], rank == 1 ? 800ms : 0ms);
  });
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK_MESSAGE(!failures[rank].has_value(), (failures[rank] ? failures[rank]->what() : ""));
    CHECK(taken[rank] > 1);
  }
  CHECK(taken[0] == taken[1]);
}

}  // namespace odbatch
