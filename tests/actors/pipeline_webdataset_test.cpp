// The pipeline over WebDataset tar shards: every 10th record of the real dataset's ShareGPT file,
// with JPEG and PNG members, converted by tools/dataset/jsonl_to_webdataset.py (the
// odbatch_webdataset fixture), gives the very batches of the same records read as JSON Lines
// (the converter's mirror.jsonl), resumes exactly from a checkpoint, and rejects a truncated
// shard's cut sample and a sample missing its image alone, located as shard:key, with a clean
// audit.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "odbatch/core/ledger.hpp"
#include "pipeline_test_support.hpp"
#include "tar_builder.hpp"

namespace odbatch {
namespace {

const std::filesystem::path kShardDir = ODBATCH_WEBDATASET_DIR;

using Epoch = test::EpochRun;
test::EpochRun run_epoch(const PipelineConfig& config, const std::filesystem::path& ledger) {
  return test::run_single_rank_epoch(config, ledger);
}

std::vector<std::filesystem::path> shards() {
  return test::webdataset_shards(kShardDir);
}

// Images per sample of the mirror file, which holds the shards' records in order.
std::map<SampleId, std::size_t> mirror_images() {
  std::ifstream in(kShardDir / "mirror.jsonl");
  std::map<SampleId, std::size_t> images;
  SampleId id = 0;
  for (std::string line; std::getline(in, line); ++id) {
    const auto record = nlohmann::json::parse(line);
    images[id] = record.contains("image")    ? 1
                 : record.contains("images") ? record["images"].size()
                                             : 0;
  }
  return images;
}

template <class Span>
bool equal_spans(const Span& a, const Span& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// Everything a trainer sees but the samples' source file numbers.
bool same_content(const Batch& a, const Batch& b) {
  return a.rows() == b.rows() && a.seq_len() == b.seq_len() &&
         equal_spans(a.input_ids(), b.input_ids()) && equal_spans(a.labels(), b.labels()) &&
         equal_spans(a.attention_mask(), b.attention_mask()) &&
         equal_spans(a.position_ids(), b.position_ids()) &&
         equal_spans(a.pixel_values(), b.pixel_values()) &&
         equal_spans(a.image_grid_thw(), b.image_grid_thw()) &&
         a.step_info().sample_ids == b.step_info().sample_ids &&
         a.step_info().loss_scale == b.step_info().loss_scale;
}

std::vector<SampleId> shard_starts(const std::vector<std::filesystem::path>& files) {
  const auto index = DatasetIndex::build(std::vector<std::string>(files.begin(), files.end()));
  std::vector<SampleId> starts;
  for (const auto& file : index.files()) starts.push_back(file.first_record);
  return starts;
}

}  // namespace

TEST_CASE("tar shards give the batches of the same records as JSON Lines, and resume exactly") {
  const auto files = shards();
  const test::TempDir dir;
  auto tar_config = test::small_config(files);
  tar_config.images.workers = 2;
  tar_config.source.index_cache = dir.path() / "index-cache";
  auto jsonl_config = tar_config;
  jsonl_config.source.files = {(kShardDir / "mirror.jsonl").string()};
  jsonl_config.source.image_root = kShardDir / "images";

  const auto from_tars = run_epoch(tar_config, dir.path() / "tar-ledger.jsonl");
  const auto from_jsonl = run_epoch(jsonl_config, dir.path() / "jsonl-ledger.jsonl");
  const auto digests = test::batch_digests(from_tars.batches);
  REQUIRE(digests.size() > 4);
  // The same steps and bytes; only the batches' source file numbers differ (several shards, one
  // mirror file).
  CHECK(from_tars.ledger.steps == from_jsonl.ledger.steps);
  REQUIRE(from_tars.batches.size() == from_jsonl.batches.size());
  for (std::size_t i = 0; i < from_tars.batches.size(); ++i) {
    CAPTURE(i);
    CHECK(same_content(*from_tars.batches[i], *from_jsonl.batches[i]));
  }
  const auto images = mirror_images();
  const auto report = test::check_and_audit(from_tars, tar_config, images, shard_starts(files));
  CHECK(report.emitted + 10 >= images.size());
  std::size_t with_images = 0;
  for (const auto& [id, count] : images) with_images += count > 0;
  CHECK(with_images > 50);
  for (const auto& rejection : from_tars.ledger.rejected) {
    CAPTURE(rejection.detail);
    CHECK(rejection.detail.starts_with(kShardDir.string() + "/shard-"));
  }
  // The index cache now holds one index per shard, which the next run uses.
  CHECK(static_cast<std::size_t>(std::distance(
            std::filesystem::directory_iterator(dir.path() / "index-cache"), {})) == files.size());

  const std::uint64_t cut = digests.size() / 2;
  Checkpoint checkpoint;
  {
    Pipeline pipeline(tar_config);
    pipeline.start_epoch(0);
    for (std::uint64_t i = 0; i < cut; ++i) REQUIRE(pipeline.next_batch());
    checkpoint = pipeline.state();
  }
  const auto resumed = Pipeline::resume(tar_config, DistEnv::single(), checkpoint);
  CHECK(test::batch_digests(test::drain(*resumed)) ==
        std::vector<std::uint64_t>(digests.begin() + static_cast<std::ptrdiff_t>(cut),
                                   digests.end()));
}

TEST_CASE("a truncated shard and a sample missing its image are rejected alone, located") {
  const auto files = shards();
  const test::TempDir dir;
  // The last shard (it holds the image samples) cut at 70%: its whole samples are read, the cut
  // one is rejected as damaged_shard.
  std::string bytes;
  {
    std::ifstream in(files.back(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto cut_shard = dir.path() / "cut.tar";
  {
    std::ofstream out(cut_shard, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() * 7 / 10));
  }
  // A record naming an image member the sample lacks.
  const std::string turns =
      R"("conversations": [{"from": "human", "value": "<image>\nWhat is it?"}, )"
      R"({"from": "gpt", "value": "A photo."}])";
  const auto missing_shard = dir.path() / "missing.tar";
  {
    std::ofstream out(missing_shard, std::ios::binary);
    out << test::tar_bytes({{"m0.json", "{\"image\": \"png\", " + turns + "}"},
                            {"m0.jpg", "not named"},
                            {"m1.json", R"({"conversations": [{"from": "human", "value": "hi"}, )"
                                        R"({"from": "gpt", "value": "hello"}]})"}});
  }
  const std::vector<std::filesystem::path> inputs = {cut_shard, missing_shard};
  const auto index = DatasetIndex::build(std::vector<std::string>(inputs.begin(), inputs.end()));
  const auto records = index.record_count();
  REQUIRE(records > 20);

  auto config = test::small_config(inputs);
  config.images.workers = 2;
  const auto epoch = run_epoch(config, dir.path() / "ledger.jsonl");
  // Every id is emitted or rejected once.
  std::set<SampleId> seen;
  for (const auto& step : epoch.ledger.steps)
    for (const auto id : step) CHECK(seen.insert(id).second);
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& rejection : epoch.ledger.rejected) {
    CHECK(seen.insert(rejection.id).second);
    by_reason[rejection.reason].push_back(rejection.detail);
  }
  CHECK(seen.size() == records);
  REQUIRE(by_reason["damaged_shard"].size() == 1);
  CHECK(by_reason["damaged_shard"][0].starts_with(cut_shard.string() + ":"));
  REQUIRE(by_reason["missing_member"].size() == 1);
  CHECK(by_reason["missing_member"][0] ==
        missing_shard.string() +
            ":m0: image png: the sample has no such member (its other members: m0.jpg)");
}

}  // namespace odbatch
