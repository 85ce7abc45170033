// The emitter alone: each step becomes a batch in the queue to the trainer, with its round's
// record; a round's end is acknowledged to the aligner only after that round's steps are queued;
// the epoch's end closes the queue.
#include <doctest/doctest.h>

#include "actor_test_bench.hpp"
#include "emitter.hpp"

namespace odbatch::actors::test {
namespace {

using Lines = std::vector<std::string>;

StepWork step_of(std::uint64_t step, std::shared_ptr<const RoundRecord> round,
                 std::vector<SampleId> ids) {
  StepWork work;
  work.round = std::move(round);
  work.info.step = step;
  work.info.round = work.round->round;
  work.info.idle = ids.empty();
  work.info.loss_scale = ids.empty() ? 0.0 : 1.0;
  for (const auto id : ids) {
    work.rows.push_back(sample_of(id, 4 + static_cast<std::uint32_t>(id % 3)));
    work.info.sample_ids.push_back(id);
    work.info.samples += 1;
    work.info.tokens += work.rows.back()->input_ids.size();
  }
  return work;
}

std::shared_ptr<const RoundRecord> round_record(std::uint64_t round, std::uint64_t first_step) {
  auto record = std::make_shared<RoundRecord>();
  record->round = round;
  record->first_step = first_step;
  return record;
}

TEST_CASE("the emitter queues each step's batch with its round and acknowledges rounds in order") {
  ActorTestBench bench(PipelineConfig{}, {});
  auto emitter = bench.system().spawn(emitter_behavior, bench.context());
  bench.wiring().emitter = emitter;
  const auto round0 = round_record(0, 0), round1 = round_record(1, 2);

  bench.send(emitter, step_of(0, round0, {3, 4}));
  bench.send(emitter, step_of(1, round0, {}));
  bench.send(emitter, round_end_atom::value, std::uint64_t{0});
  CHECK(bench.received("aligner") == Lines{"emitted round 0"});
  bench.send(emitter, step_of(2, round1, {5}));
  bench.send(emitter, round_end_atom::value, std::uint64_t{1});
  CHECK(bench.received("aligner") == Lines{"emitted round 1"});
  bench.send(emitter, epoch_end_atom::value, std::uint64_t{3});
  CHECK(bench.received("aligner").empty());

  std::vector<std::shared_ptr<const RoundRecord>> rounds;
  Lines batches;
  while (auto queued = bench.queue().pop()) {
    const auto& info = queued->batch->step_info();
    batches.push_back(std::to_string(info.step) + ": " + std::to_string(queued->batch->rows()) +
                      " rows" + (info.idle ? ", idle" : ""));
    rounds.push_back(queued->round);
  }
  CHECK(batches == Lines{"0: 2 rows", "1: 1 rows, idle", "2: 1 rows"});
  CHECK(rounds == std::vector<std::shared_ptr<const RoundRecord>>{round0, round0, round1});
}

}  // namespace
}  // namespace odbatch::actors::test
