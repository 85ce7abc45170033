// The user stages' actors alone on CAF's deterministic scheduler: a stage's dispatcher hands work
// to the workers that ask, each item goes through the stage and on to the next stage of its kind
// or back to the reader or the joiner, a rejected item skips the stages left, a stage's exception
// rejects only its item; and the joiner holds each complete sample back until the sample stages
// return it, releasing in shard order.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>

#include "actor_test_bench.hpp"
#include "joiner.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "stage_pools.hpp"

namespace odbatch::actors::test {
namespace {

using Lines = std::vector<std::string>;

// Appends "!" to every message; rejects records whose id is a multiple of three.
class Shout : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    if (record.id % 3 == 0) return reject("third", "id " + std::to_string(record.id));
    for (auto& message : record.messages) message.content += "!";
    return keep();
  }
};

// Throws on id 4; prefixes every message with "> " otherwise.
class Quote : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    if (record.id == 4) throw std::runtime_error("no quotes for 4");
    for (auto& message : record.messages) message.content = "> " + message.content;
    return keep();
  }
};

// Masks every label but the last.
class MaskAllButLast : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext&) override {
    for (std::size_t i = 0; i + 1 < sample.labels.size(); ++i) sample.labels[i] = kIgnoreLabel;
    return keep();
  }
};

class RejectOdd : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext&) override {
    return sample.id % 2 ? reject("odd") : keep();
  }
};

StageRegistry stage_types() {
  StageRegistry registry;
  registry.add_record_stage("shout", "1",
                            [](const StageParams&) { return std::make_unique<Shout>(); });
  registry.add_record_stage("quote", "1",
                            [](const StageParams&) { return std::make_unique<Quote>(); });
  registry.add_sample_stage("mask", "1",
                            [](const StageParams&) { return std::make_unique<MaskAllButLast>(); });
  registry.add_sample_stage("reject_odd", "1",
                            [](const StageParams&) { return std::make_unique<RejectOdd>(); });
  return registry;
}

StageConfig entry(std::string name, StageKind kind, std::uint32_t workers) {
  StageConfig stage;
  stage.name = name;
  stage.type = std::move(name);
  stage.kind = kind;
  stage.workers = workers;
  return stage;
}

RecordWork record_of(std::uint64_t seq, SampleId id) {
  RecordWork work;
  work.seq = seq;
  work.record.id = id;
  work.record.where = "r.jsonl:" + std::to_string(id + 1);
  work.record.messages = {{Role::user, "q" + std::to_string(id)}, {Role::assistant, "a"}};
  return work;
}

// An index over `records` one-line records, so that sample stages can say where a sample is.
std::shared_ptr<const DatasetIndex> index_of(const std::filesystem::path& file, int records) {
  std::ofstream out(file);
  for (int i = 0; i < records; ++i) out << "{}\n";
  out.close();
  const std::vector<std::string> files{file.string()};
  return std::make_shared<const DatasetIndex>(DatasetIndex::build(files));
}

}  // namespace

TEST_CASE("record stages run in order, skip what one rejects, and return records to the reader") {
  PipelineConfig config;
  config.stages = {entry("shout", StageKind::record, 2), entry("quote", StageKind::record, 1)};
  ActorTestBench bench(config, {0, 1, 2, 3, 4, 5}, {}, stage_types());
  auto& w = bench.wiring();
  // The stages' own actors replace the probes, the quote stage's dispatcher first so that the
  // shout workers send to it.
  w.record_stages[1].dispatcher = spawn_record_stage_dispatcher(bench.system(), bench.context(), 1);
  w.record_stages[1].workers = {spawn_record_stage_worker(bench.system(), bench.context(), 1, 0)};
  w.record_stages[0].dispatcher = spawn_record_stage_dispatcher(bench.system(), bench.context(), 0);
  for (std::uint32_t n = 0; n < 2; ++n)
    w.record_stages[0].workers.push_back(
        spawn_record_stage_worker(bench.system(), bench.context(), 0, n));
  for (const auto& pool : w.record_stages)
    for (const auto& worker : pool.workers) bench.send(worker, start_atom::value);
  for (std::uint64_t seq = 0; seq < 6; ++seq)
    bench.send(w.record_stages[0].dispatcher, record_of(seq, seq));
  CHECK(bench.received("reader") ==
        Lines{"record 0 rejected shout:third | q0 | a", "record 1 kept | > q1! | > a!",
              "record 2 kept | > q2! | > a!", "record 3 rejected shout:third | q3 | a",
              "record 4 rejected quote:exception | q4! | a!", "record 5 kept | > q5! | > a!"});
  const auto& stages = bench.context()->resources().stages.record;
  CHECK(stages[0].counters->work.items.load() == 6);
  CHECK(stages[1].counters->work.items.load() == 4);  // the rejected ones skipped it
  CHECK(stages[0].counters->queue.depth.load() == 0);
  CHECK(stages[0].counters->queue.capacity.load() > 0);
}

TEST_CASE("sample stages mask labels the packer will see and reject with the stage's reason") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("odbatch-stage-pool-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  PipelineConfig config;
  config.stages = {entry("reject_odd", StageKind::sample, 1), entry("mask", StageKind::sample, 2)};
  ActorTestBench bench(config, {0, 1, 2, 3}, {}, stage_types(), index_of(dir / "r.jsonl", 4));
  auto& w = bench.wiring();
  w.sample_stages[1].dispatcher = spawn_sample_stage_dispatcher(bench.system(), bench.context(), 1);
  for (std::uint32_t n = 0; n < 2; ++n)
    w.sample_stages[1].workers.push_back(
        spawn_sample_stage_worker(bench.system(), bench.context(), 1, n));
  w.sample_stages[0].dispatcher = spawn_sample_stage_dispatcher(bench.system(), bench.context(), 0);
  w.sample_stages[0].workers = {spawn_sample_stage_worker(bench.system(), bench.context(), 0, 0)};
  for (const auto& pool : w.sample_stages)
    for (const auto& worker : pool.workers) bench.send(worker, start_atom::value);
  for (std::uint64_t seq = 0; seq < 4; ++seq) {
    SampleWork work;
    work.seq = seq;
    work.sample = sample_of(seq, 6);  // 5 supervised targets
    bench.send(w.sample_stages[0].dispatcher, std::move(work));
  }
  CHECK(bench.received("joiner") ==
        Lines{"sample 0 kept labels 1", "sample 1 rejected reject_odd:odd",
              "sample 2 kept labels 1", "sample 3 rejected reject_odd:odd"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("with sample stages the joiner releases a sample only once the stages return it") {
  PipelineConfig config;
  config.flow.lookahead = 0;
  config.stages = {entry("mask", StageKind::sample, 1)};
  ActorTestBench bench(config, {20, 21}, {}, stage_types());
  auto joiner = spawn_joiner(bench.system(), bench.context());
  bench.wiring().joiner = joiner;
  const auto start = [](std::uint64_t seq, SampleId id) {
    SampleStart s;
    s.seq = seq;
    s.id = id;
    s.parts = 1;
    return s;
  };
  const auto text = [](std::uint64_t seq, SampleId id) {
    TextDone done;
    done.seq = seq;
    done.sample = sample_of(id, 4);
    return done;
  };
  bench.send(joiner, want_atom::value, std::uint32_t{2});
  // Position 1 completes first: it goes to the stages at once, ahead of shard order, and waits.
  bench.send(joiner, start(1, 21));
  bench.send(joiner, text(1, 21));
  CHECK(bench.received("mask") == Lines{"sample 21 kept labels 3"});
  bench.send(joiner, start(0, 20));
  bench.send(joiner, text(0, 20));
  CHECK(bench.received("mask") == Lines{"sample 20 kept labels 3"});
  CHECK(bench.received("packer").empty());
  // The stages return position 1 first: still nothing, position 0 is not back.
  SampleWork back;
  back.seq = 1;
  back.sample = sample_of(21, 4);
  back.sample->supervised_targets = 1;
  bench.send(joiner, std::move(back));
  CHECK(bench.received("packer").empty());
  SampleWork first;
  first.seq = 0;
  first.rejection = Rejection{20, "mask:exception", "r.jsonl:1: boom"};
  bench.send(joiner, std::move(first));
  CHECK(bench.received("packer") == Lines{"rejected 20", "sample 21"});
  CHECK(bench.received("reader") == Lines{"credit 2"});
}

}  // namespace odbatch::actors::test
