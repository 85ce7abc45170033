// Checkpoint and resume mid-epoch. With the same world size, the batches after the resume point
// are byte for byte those of an uninterrupted run, at random cut points, padded and packed, both
// policies, one rank and three; onto another world size every sample the epoch had not emitted
// is emitted exactly once; at an epoch's end the next epoch is neither skipped nor repeated; a
// checkpoint made for another configuration is refused naming the setting.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using test::cut_epoch;
using test::RankRun;
using test::run_ranks;

PipelineConfig resume_config(const std::filesystem::path& dir) {
  auto records = test::text_records(150);
  const auto images = test::image_records(12, /*wallpapers=*/false);
  records.insert(records.end(), images.begin(), images.end());
  test::write_jsonl(dir / "records.jsonl", records);
  auto config = test::small_config({dir / "records.jsonl"});
  config.batching.token_budget = 1024;
  config.batching.max_seq_len = 1024;
  config.batching.window = 16;
  config.flow.prefetch = 2;
  return config;
}

// The digests of an epoch's batches from step `first` on, after resuming from `checkpoint`.
std::vector<std::uint64_t> resumed_digests(const PipelineConfig& config, DistEnv dist,
                                           const Checkpoint& checkpoint) {
  const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint);
  return test::batch_digests(test::drain(*pipeline));
}

// Takes `steps` batches of `epoch`, then returns the rank's state.
Checkpoint state_after(const PipelineConfig& config, DistEnv dist, std::uint64_t epoch,
                       std::uint64_t steps) {
  Pipeline pipeline(config, std::move(dist));
  pipeline.start_epoch(epoch);
  for (std::uint64_t i = 0; i < steps; ++i) REQUIRE(pipeline.next_batch());
  return pipeline.state();
}

TEST_CASE("one rank resumes at random cut points with the very batches of an uninterrupted run") {
  test::require_dataset();
  const test::TempDir dir;
  auto config = resume_config(dir.path());
  std::mt19937_64 random(20261203);
  for (const auto layout : {BatchLayout::padded, BatchLayout::packed})
    for (const auto policy : {Policy::balanced, Policy::reference}) {
      config.flow.layout = layout;
      config.batching.policy = policy;
      CAPTURE(to_string(layout));
      CAPTURE(to_string(policy));
      std::vector<std::uint64_t> whole;
      {
        Pipeline pipeline(config);
        pipeline.start_epoch(1);
        whole = test::batch_digests(test::drain(pipeline));
      }
      REQUIRE(whole.size() > 8);
      std::vector<std::uint64_t> cuts = {1, whole.size() - 1};
      for (int i = 0; i < 3; ++i) cuts.push_back(1 + random() % (whole.size() - 1));
      for (const auto cut : cuts) {
        CAPTURE(cut);
        const auto checkpoint = state_after(config, DistEnv::single(), 1, cut);
        CHECK(checkpoint.steps_taken == cut);
        const std::vector<std::uint64_t> rest(whole.begin() + static_cast<std::ptrdiff_t>(cut),
                                              whole.end());
        CHECK(resumed_digests(config, DistEnv::single(), checkpoint) == rest);
      }
    }
}

std::vector<RankRun> whole_epoch(const PipelineConfig& config, std::uint32_t world) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    Pipeline pipeline(config, std::move(dist));
    pipeline.start_epoch(0);
    run.batches = test::drain(pipeline);
  });
}

std::vector<RankRun> resumed_epoch(const PipelineConfig& config, std::uint32_t world,
                                   const Checkpoint& checkpoint) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint);
    run.batches = test::drain(*pipeline);
  });
}

Checkpoint joined(const std::vector<RankRun>& runs) {
  std::vector<Checkpoint> parts;
  for (const auto& run : runs) parts.push_back(run.part);
  return join_checkpoint_parts(parts);
}

TEST_CASE("three ranks resume with the very batches of an uninterrupted run") {
  test::require_dataset();
  const test::TempDir dir;
  const auto config = resume_config(dir.path());
  const auto whole = whole_epoch(config, 3);
  const auto steps = whole[0].batches.size();
  REQUIRE(steps > 4);
  for (const auto cut : {std::uint64_t{1}, steps / 2, steps - 1}) {
    CAPTURE(cut);
    const auto checkpoint = joined(cut_epoch(config, 3, cut));
    const auto resumed = resumed_epoch(config, 3, checkpoint);
    for (std::uint32_t rank = 0; rank < 3; ++rank) {
      CAPTURE(rank);
      const std::vector<std::shared_ptr<const Batch>> rest(
          whole[rank].batches.begin() + static_cast<std::ptrdiff_t>(cut),
          whole[rank].batches.end());
      CHECK(test::batch_digests(resumed[rank].batches) == test::batch_digests(rest));
    }
  }
}

// Every id emitted over the cut and the resumed runs, counted.
std::multiset<SampleId> emitted_ids(const std::vector<RankRun>& cut,
                                    const std::vector<RankRun>& resumed) {
  std::multiset<SampleId> ids;
  for (const auto* runs : {&cut, &resumed})
    for (const auto& run : *runs)
      for (const auto& batch : run.batches)
        for (const auto id : batch->step_info().sample_ids) ids.insert(id);
  return ids;
}

TEST_CASE("resumed onto another world size, every sample not yet emitted is emitted once") {
  test::require_dataset();
  const test::TempDir dir;
  const auto config = resume_config(dir.path());
  const auto expected = emitted_ids(whole_epoch(config, 1), {});
  for (const auto& [from, to] : {std::pair{4u, 2u}, std::pair{2u, 3u}}) {
    CAPTURE(from);
    CAPTURE(to);
    const auto cut = cut_epoch(config, from, 3);
    const auto resumed = resumed_epoch(config, to, joined(cut));
    CHECK(emitted_ids(cut, resumed) == expected);
    // The resumed ranks keep step numbers and totals going on from the checkpoint.
    const auto& first = resumed[0].batches.front()->step_info();
    CHECK(first.step == 3);
    for (std::uint32_t rank = 1; rank < to; ++rank)
      CHECK(resumed[rank].batches.size() == resumed[0].batches.size());
  }
}

// Resumes `checkpoint` on `world` ranks, takes `steps` batches each and saves again.
std::vector<RankRun> resumed_and_cut(const PipelineConfig& config, std::uint32_t world,
                                     const Checkpoint& checkpoint, std::uint64_t steps) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint);
    for (std::uint64_t i = 0; i < steps; ++i) run.batches.push_back(pipeline->next_batch());
    run.part = pipeline->state();
    pipeline->depart();
  });
}

// Resumes `checkpoint` on `world` ranks and saves again before taking any batch.
std::vector<RankRun> resumed_and_saved_at_once(const PipelineConfig& config, std::uint32_t world,
                                               const Checkpoint& checkpoint) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint);
    run.part = pipeline->state();
    pipeline->depart();
  });
}

TEST_CASE("a checkpoint saved right after a resume resumes the same way") {
  test::require_dataset();
  const test::TempDir dir;
  const auto config = resume_config(dir.path());
  const auto from_three = joined(cut_epoch(config, 3, 4));
  for (const std::uint32_t world : {3u, 2u}) {
    CAPTURE(world);
    const auto expected = resumed_epoch(config, world, from_three);
    const auto again = joined(resumed_and_saved_at_once(config, world, from_three));
    CHECK(again.steps_taken == 4);
    CHECK(again.progress == from_three.progress);
    const auto resumed = resumed_epoch(config, world, again);
    for (std::uint32_t rank = 0; rank < world; ++rank) {
      CAPTURE(rank);
      CHECK(test::batch_digests(resumed[rank].batches) ==
            test::batch_digests(expected[rank].batches));
    }
  }
}

TEST_CASE("an epoch resumed onto another world size is saved and resumed again") {
  test::require_dataset();
  const test::TempDir dir;
  const auto config = resume_config(dir.path());
  const auto expected = emitted_ids(whole_epoch(config, 1), {});
  const auto first = cut_epoch(config, 3, 3);
  const auto from_three = joined(first);
  const auto uninterrupted = resumed_epoch(config, 2, from_three);
  const auto second = resumed_and_cut(config, 2, from_three, 4);
  const auto from_two = joined(second);
  REQUIRE(from_two.origin);
  CHECK(*from_two.origin == from_three);
  CHECK(from_two.steps_taken == 7);
  // The same two ranks go on with the batches the resumed run would have yielded.
  const auto again = resumed_epoch(config, 2, from_two);
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    CAPTURE(rank);
    const std::vector<std::shared_ptr<const Batch>> rest(uninterrupted[rank].batches.begin() + 4,
                                                         uninterrupted[rank].batches.end());
    CHECK(test::batch_digests(again[rank].batches) == test::batch_digests(rest));
  }
  // Onto three ranks again: every sample of the epoch once over all the runs.
  const auto third = resumed_epoch(config, 3, from_two);
  auto ids = emitted_ids(first, second);
  for (const auto& id : emitted_ids({}, third)) ids.insert(id);
  CHECK(ids == expected);
}

TEST_CASE(
    "a checkpoint at an epoch's end resumes with the next epoch, neither skipped nor repeated") {
  test::require_dataset();
  const test::TempDir dir;
  const auto config = resume_config(dir.path());
  Checkpoint checkpoint;
  {
    Pipeline pipeline(config);
    pipeline.start_epoch(4);
    test::drain(pipeline);
    checkpoint = pipeline.state();
  }
  CHECK(checkpoint.epoch == 5);
  CHECK(checkpoint.steps_taken == 0);
  Pipeline fresh(config);
  fresh.start_epoch(5);
  CHECK(resumed_digests(config, DistEnv::single(), checkpoint) ==
        test::batch_digests(test::drain(fresh)));
}

TEST_CASE("a checkpoint of another configuration is refused, naming the setting") {
  test::require_dataset();
  const test::TempDir dir;
  auto config = resume_config(dir.path());
  const auto checkpoint = state_after(config, DistEnv::single(), 0, 2);
  config.batching.window = 32;
  config.flow.prefetch = 7;  // safe to change: not named
  CHECK_THROWS_WITH_AS(Pipeline::resume(config, DistEnv::single(), checkpoint),
                       doctest::Contains("batching.window: 16 in the checkpoint, 32 now"),
                       CheckpointError);
  config.batching.window = 16;
  CHECK_NOTHROW(Pipeline::resume(config, DistEnv::single(), checkpoint));
  auto part = checkpoint;
  part.world_size = 2;
  CHECK_THROWS_WITH_AS(Pipeline::resume(config, DistEnv::single(), part),
                       doctest::Contains("holds 1 of its 2 ranks' parts"), CheckpointError);
}

}  // namespace
}  // namespace odbatch
