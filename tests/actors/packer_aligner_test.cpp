// The packer and the aligner together, the joiner, coordinator and emitter around them scripted:
// a round is proposed only once the packer closed it, the joiner's lookahead is primed (first
// round) and the previous round's batches are all queued; the next round's admission overlaps
// the planning; the plan's steps go to the emitter in order, each round's end after them; a
// resumed epoch replays its round without the steps already taken.
#include <doctest/doctest.h>

#include "actor_test_bench.hpp"
#include "round_actors.hpp"

namespace odbatch::actors::test {
namespace {

using Lines = std::vector<std::string>;

Joined joined_of(SampleId id) {
  return Joined{sample_of(id, 5), std::nullopt};
}

// Rounds of two samples, all of a round's samples fitting one step.
PipelineConfig two_sample_rounds() {
  PipelineConfig config;
  config.batching.window = 2;
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.warmup = Warmup::none;
  return config;
}

struct PackerAndAligner {
  packer_actor packer;
  aligner_actor aligner;
};

// The two actors under test, wired into the bench; the other stages are its probes.
PackerAndAligner spawn_packer_and_aligner(ActorTestBench& bench) {
  PackerAndAligner actors{spawn_packer(bench.system(), bench.context()),
                          spawn_aligner(bench.system(), bench.context())};
  bench.wiring().packer = actors.packer;
  bench.wiring().aligner = actors.aligner;
  return actors;
}

TEST_CASE("a round is proposed once closed, primed and its predecessor's batches are queued") {
  ActorTestBench bench(two_sample_rounds(), {30, 31, 32});
  const auto [packer, aligner] = spawn_packer_and_aligner(bench);

  bench.send(packer, start_atom::value);
  CHECK(bench.received("joiner") == Lines{"want 2"});

  // Round 0 closes with its two samples, but the joiner's lookahead is not primed yet.
  bench.send(packer, joined_of(30));
  bench.send(packer, joined_of(31));
  CHECK(bench.received("coordinator").empty());
  CHECK(bench.received("joiner").empty());

  // Primed: round 0 is proposed, planned and emitted; round 1's admission opens meanwhile.
  bench.send(aligner, primed_atom::value);
  CHECK(bench.received("coordinator") == Lines{"propose round 0 active, 2 samples"});
  CHECK(bench.received("joiner") == Lines{"want 2"});
  CHECK(bench.received("emitter") == Lines{"step 0 of round 0: 30,31", "round end 0"});

  // Round 1 closes (the shard is exhausted) while round 0's batches are not all queued.
  bench.send(packer, joined_of(32));
  CHECK(bench.received("coordinator").empty());

  // Once they are, round 1 drains the window; round 2 finds every rank done and ends the epoch.
  bench.send(aligner, emitted_atom::value, std::uint64_t{0});
  CHECK(bench.received("coordinator") == Lines{"propose round 1 draining, 1 samples"});
  CHECK(bench.received("emitter") == Lines{"step 1 of round 1: 32", "round end 1"});
  bench.send(aligner, emitted_atom::value, std::uint64_t{1});
  CHECK(bench.received("coordinator") == Lines{"propose round 2 done, 0 samples"});
  CHECK(bench.received("emitter") == Lines{"round end 2", "epoch end after 2 steps"});
  CHECK(bench.received("joiner").empty());
}

TEST_CASE("a rejected sample counts as consumed and is not admitted") {
  ActorTestBench bench(two_sample_rounds(), {40, 41});
  const auto [packer, aligner] = spawn_packer_and_aligner(bench);
  bench.send(packer, start_atom::value);
  bench.send(aligner, primed_atom::value);
  CHECK(bench.received("joiner") == Lines{"want 2"});
  bench.send(packer, Joined{nullptr, Rejection{40, "malformed_json", "a.jsonl:1: bad"}});
  CHECK(bench.received("coordinator").empty());
  bench.send(packer, joined_of(41));
  CHECK(bench.received("coordinator") == Lines{"propose round 0 draining, 1 samples"});
  CHECK(bench.received("emitter") == Lines{"step 0 of round 0: 41", "round end 0"});
}

TEST_CASE("a resumed epoch restores its window, replays its round and skips the steps taken") {
  // The checkpoint's round 5 began at step 10 with samples 50 (deferred once) and 51; the trainer
  // had taken step 10. Sample 52 is the rest of the shard.
  EpochStart start;
  start.round = 5;
  start.round_first_step = 10;
  start.steps_taken = 11;
  start.restored_ages = {1, 0};
  PipelineConfig config = two_sample_rounds();
  config.batching.token_budget = 8;  // one sample of 5 tokens per step
  config.batching.max_seq_len = 8;
  ActorTestBench bench(config, {50, 51, 52}, start);
  const auto [packer, aligner] = spawn_packer_and_aligner(bench);

  bench.send(packer, start_atom::value);
  CHECK(bench.received("joiner") == Lines{"want 2"});
  bench.send(packer, joined_of(50));
  bench.send(packer, joined_of(51));
  bench.send(aligner, primed_atom::value);
  CHECK(bench.received("coordinator") == Lines{"propose round 5 active, 2 samples"});
  CHECK(bench.received("joiner") == Lines{"want 2"});
  CHECK(bench.received("emitter") == Lines{"step 11 of round 5: 51", "round end 5"});
}

}  // namespace
}  // namespace odbatch::actors::test
