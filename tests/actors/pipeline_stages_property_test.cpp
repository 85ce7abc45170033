// Random user stages keep every guarantee. In each scenario, drawn from a seed: a record stage
// that rejects one record in ten and a sample stage that flips images at random (each drawn from
// the sample's own generator), on 1, 2 and 3 ranks: every id emitted once or rejected once, equal
// steps on every rank, the same batches on a rerun with other pool sizes and timing, a resume at a
// random step with the very batches of the uninterrupted run, and a resume onto another world
// size in which every sample not yet emitted is emitted once with the very tokens and pixels the
// stages gave it.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "mirrored_image.hpp"
#include "odbatch/core/stable_hash.hpp"
#include "odbatch/stage/stage.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using test::RankRun;
using test::run_ranks;

class RejectSome : public RecordStage {
 public:
  explicit RejectSome(double p) : p_(p) {}
  StageVerdict process(StageRecord&, StageContext& context) override {
    if (context.random().bernoulli(p_)) return reject("unlucky");
    return keep();
  }

 private:
  double p_;
};

class FlipSome : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext& context) override {
    for (auto& image : sample.images)
      if (context.random().bernoulli(0.5)) test::mirror_left_right(image);
    return keep();
  }
};

PipelineOptions random_stages() {
  PipelineOptions options;
  options.stages.add_record_stage(
      "reject_some", "1",
      [](const StageParams& p) { return std::make_unique<RejectSome>(p.number("p", 0.1)); },
      {"unlucky"});
  options.stages.add_sample_stage("flip_some", "1",
                                  [](const StageParams&) { return std::make_unique<FlipSome>(); });
  return options;
}

struct Scenario {
  PipelineConfig config;
  std::map<SampleId, std::size_t> images;  // every id of the epoch, with its image count
};

// A scenario from `seed`: records, window, budget and the stages' pool sizes drawn.
Scenario scenario(const std::filesystem::path& dir, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto text = test::text_records(40 + random() % 40);
  const auto images = test::image_records(6 + random() % 8, false);
  std::vector<test::SftRecord> records;
  std::size_t t = 0, i = 0;
  while (t < text.size() || i < images.size())
    records.push_back(i < images.size() && (t == text.size() || random() % 4 == 0) ? images[i++]
                                                                                   : text[t++]);
  test::write_jsonl(dir / "records.jsonl", records);
  Scenario s;
  for (std::size_t id = 0; id < records.size(); ++id) s.images[id] = records[id].images;
  auto& c = s.config = test::small_config({dir / "records.jsonl"});
  c.batching.seed = seed;
  c.batching.window = 8 + static_cast<std::uint32_t>(random() % 16);
  c.batching.token_budget = 1024 + 512 * static_cast<std::uint32_t>(random() % 3);
  c.batching.max_seq_len = 1024;
  c.flow.prefetch = 2;
  StageConfig reject;
  reject.name = "reject";
  reject.type = "reject_some";
  reject.workers = 1 + static_cast<std::uint32_t>(random() % 3);
  StageConfig flip;
  flip.name = "flip";
  flip.kind = StageKind::sample;
  flip.type = "flip_some";
  flip.workers = 1 + static_cast<std::uint32_t>(random() % 3);
  c.stages = {reject, flip};
  return s;
}

// The same scenario with other pool sizes and delays: nothing that may change a batch.
PipelineConfig reshuffled(PipelineConfig c) {
  c.stages[0].workers = 4 - c.stages[0].workers;
  c.stages[1].workers = 4 - c.stages[1].workers;
  c.tokenizer.workers = 3;
  c.images.workers = 2;
  c.flow.worker_jitter_us = 200;
  return c;
}

std::vector<RankRun> run_epoch(const PipelineConfig& config, std::uint32_t world,
                               const std::filesystem::path& ledgers) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    auto options = random_stages();
    options.ledger = ledgers / ("ledger-" + std::to_string(dist.rank) + ".jsonl");
    Pipeline pipeline(config, std::move(dist), std::move(options));
    pipeline.start_epoch(0);
    run.batches = test::drain(pipeline);
  });
}

std::vector<RankRun> resumed_epoch(const PipelineConfig& config, std::uint32_t world,
                                   const Checkpoint& checkpoint) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint, random_stages());
    run.batches = test::drain(*pipeline);
  });
}

// What the trainer got of each sample: its row's tokens and labels and its images' pixels.
std::map<SampleId, std::uint64_t> sample_digests(const std::vector<RankRun>& runs,
                                                 const std::map<SampleId, std::size_t>& images,
                                                 std::uint32_t patch) {
  std::map<SampleId, std::uint64_t> digests;
  for (const auto& run : runs)
    for (const auto& batch : run.batches) {
      const auto& ids = batch->step_info().sample_ids;
      if (batch->step_info().idle) continue;
      const auto width = batch->seq_len();
      const auto grids = batch->image_grid_thw();
      std::size_t image = 0, offset = 0;
      for (std::size_t row = 0; row < ids.size(); ++row) {
        StableHasher hasher;
        for (std::size_t k = 0; k < width; ++k) {
          if (!batch->attention_mask()[row * width + k]) continue;
          hasher.add(static_cast<std::uint64_t>(batch->input_ids()[row * width + k]));
          hasher.add(static_cast<std::uint64_t>(batch->labels()[row * width + k]));
        }
        for (std::size_t n = 0; n < images.at(ids[row]); ++n, ++image) {
          const std::size_t bytes = std::size_t(grids[image * 3 + 1]) * patch *
                                    std::size_t(grids[image * 3 + 2]) * patch * 3;
          for (const auto byte : batch->pixel_values().subspan(offset, bytes)) hasher.add(byte);
          offset += bytes;
        }
        CHECK(digests.emplace(ids[row], hasher.digest()).second);
      }
    }
  return digests;
}

std::set<SampleId> rejected_ids(const std::filesystem::path& ledgers, std::uint32_t world) {
  std::set<SampleId> ids;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    for (const auto& rejection :
         test::read_ledger(ledgers / ("ledger-" + std::to_string(rank) + ".jsonl"), 0).rejected) {
      CHECK(rejection.reason == "reject:unlucky");
      CHECK(ids.insert(rejection.id).second);
    }
  return ids;
}

Checkpoint joined(const std::vector<RankRun>& runs) {
  std::vector<Checkpoint> parts;
  for (const auto& run : runs) parts.push_back(run.part);
  return join_checkpoint_parts(parts);
}

}  // namespace

TEST_CASE("random stages keep every guarantee on 1, 2 and 3 ranks, across reruns and resumes") {
  test::require_dataset();
  const std::uint64_t scenarios = 3;
  for (std::uint64_t seed = 101; seed < 101 + scenarios; ++seed) {
    CAPTURE(seed);
    const test::TempDir dir;
    const auto s = scenario(dir.path(), seed);
    const auto patch = s.config.images.geometry.patch_size;
    std::mt19937_64 random(seed);
    std::map<SampleId, std::uint64_t> one_rank;  // every emitted sample as one rank gets it
    for (std::uint32_t world = 1; world <= 3; ++world) {
      CAPTURE(world);
      const auto whole = run_epoch(s.config, world, dir.path());
      const auto rejected = rejected_ids(dir.path(), world);
      const auto digests = sample_digests(whole, s.images, patch);
      // Every id once: emitted or rejected, never both.
      for (const auto& [id, image_count] : s.images) {
        CAPTURE(id);
        CHECK(digests.count(id) + rejected.count(id) == 1);
      }
      CHECK(!rejected.empty());
      for (const auto& run : whole) CHECK(run.batches.size() == whole[0].batches.size());
      // A sample's tokens and pixels depend on it alone, not on the rank that read it.
      if (world == 1) one_rank = digests;
      CHECK(digests == one_rank);
      const auto again = run_epoch(reshuffled(s.config), world, dir.path());
      for (std::uint32_t rank = 0; rank < world; ++rank)
        CHECK(test::batch_digests(again[rank].batches) == test::batch_digests(whole[rank].batches));

      const auto steps = whole[0].batches.size();
      REQUIRE(steps > 2);
      const auto cut = 1 + random() % (steps - 1);
      CAPTURE(cut);
      const auto checkpoint = joined(test::cut_epoch(s.config, world, cut, random_stages));
      const auto resumed = resumed_epoch(s.config, world, checkpoint);
      for (std::uint32_t rank = 0; rank < world; ++rank) {
        const std::vector<std::shared_ptr<const Batch>> rest(
            whole[rank].batches.begin() + static_cast<std::ptrdiff_t>(cut),
            whole[rank].batches.end());
        CHECK(test::batch_digests(resumed[rank].batches) == test::batch_digests(rest));
      }
      // Onto another world size: the samples not yet emitted, each once, as the stages made it.
      const std::uint32_t other = world % 3 + 1;
      CAPTURE(other);
      const auto moved = resumed_epoch(s.config, other, checkpoint);
      std::vector<RankRun> cut_part(world);
      for (std::uint32_t rank = 0; rank < world; ++rank)
        cut_part[rank].batches.assign(
            whole[rank].batches.begin(),
            whole[rank].batches.begin() + static_cast<std::ptrdiff_t>(cut));
      auto emitted = sample_digests(cut_part, s.images, patch);
      for (const auto& [id, digest] : sample_digests(moved, s.images, patch))
        CHECK(emitted.emplace(id, digest).second);
      CHECK(emitted == one_rank);
    }
  }
}

}  // namespace odbatch
