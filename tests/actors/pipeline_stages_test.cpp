// User stages in the pipeline's graph: record and sample stages registered in code change,
// reject and randomise what reaches the packer, and every guarantee holds: each id emitted once
// or rejected with "<stage>:<reason>", batches equal from run to run, the packer sees each
// sample's final cost, and a stage's failure is a rejection, never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "mirrored_image.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/stage/stage.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

// Rejects conversations whose assistant text is shorter than `min_chars` bytes.
class ShortAnswerFilter : public RecordStage {
 public:
  explicit ShortAnswerFilter(std::int64_t min_chars) : min_chars_(min_chars) {}
  StageVerdict process(StageRecord& record, StageContext&) override {
    std::size_t chars = 0;
    for (const auto& message : record.messages)
      if (message.role == Role::assistant) chars += message.content.size();
    if (static_cast<std::int64_t>(chars) < min_chars_)
      return reject("too_short", std::to_string(chars) + " bytes of answer");
    return keep();
  }

 private:
  std::int64_t min_chars_;
};

// The assistant bytes of a JSONL line, as the filter counts them.
std::size_t answer_bytes(const std::string& line) {
  const auto parsed = parse_conversation(line, "test");
  std::size_t chars = 0;
  for (const auto& message : std::get<Conversation>(parsed).messages)
    if (message.role == Role::assistant) chars += message.content.size();
  return chars;
}

// Masks every label of samples with an even id: under zero_labels = reject the packer rejects
// them, which it can only do if it sees the labels the stage left.
class MaskEven : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext&) override {
    if (sample.id % 2 == 0) std::fill(sample.labels.begin(), sample.labels.end(), kIgnoreLabel);
    return keep();
  }
};

// Mirrors each image left to right with probability 0.5, from the sample's generator.
class RandomFlip : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext& context) override {
    for (auto& image : sample.images)
      if (context.random().bernoulli(0.5)) test::mirror_left_right(image);
    return keep();
  }
};

class ThrowingRecord : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    if (record.id % 3 == 0) throw std::runtime_error(std::string(5000, 'x'));
    return keep();
  }
};

class ThrowingSample : public SampleStage {
 public:
  StageVerdict process(StageSample& sample, StageContext&) override {
    if (sample.id % 5 == 1)
      throw std::runtime_error("no pixels for sample " + std::to_string(sample.id));
    return keep();
  }
};

// Drops every image and its placeholder: image records become text ones.
class DropImages : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    record.images.clear();
    for (auto& message : record.messages) {
      for (auto at = message.content.find(kImagePlaceholder); at != std::string::npos;
           at = message.content.find(kImagePlaceholder))
        message.content.erase(at, kImagePlaceholder.size());
    }
    return keep();
  }
};

// Breaks the record by `params.how`: "placeholders" (images kept, placeholders gone) or "escape"
// (an image path that leaves the image root).
class BreakRecord : public RecordStage {
 public:
  explicit BreakRecord(std::string how) : how_(std::move(how)) {}
  StageVerdict process(StageRecord& record, StageContext&) override {
    if (record.images.empty()) return keep();
    if (how_ == "escape") {
      record.images[0].path = "../../outside.jpg";
    } else {
      for (auto& message : record.messages) {
        for (auto at = message.content.find(kImagePlaceholder); at != std::string::npos;
             at = message.content.find(kImagePlaceholder))
          message.content.erase(at, kImagePlaceholder.size());
      }
    }
    return keep();
  }

 private:
  std::string how_;
};

// Sets the template variable `tag` to the record's source and id.
class TagRecord : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    record.template_variables["tag"] = "record " + std::to_string(record.id);
    return keep();
  }
};

// Keeps the left half of each image (params.overflow: a crop one pixel wider than the image).
class CropLeftHalf : public RecordStage {
 public:
  explicit CropLeftHalf(bool overflow) : overflow_(overflow) {}
  StageVerdict process(StageRecord& record, StageContext&) override {
    for (auto& image : record.images)
      image.crop = ImageCrop{0, 0, overflow_ ? image.width + 1 : std::max(1u, image.width / 2),
                             image.height};
    return keep();
  }

 private:
  bool overflow_;
};

StageRegistry test_stages() {
  StageRegistry registry;
  registry.add_record_stage("crop_left", "1", [](const StageParams& params) {
    return std::make_unique<CropLeftHalf>(params.flag("overflow", false));
  });
  registry.add_record_stage("drop_images", "1",
                            [](const StageParams&) { return std::make_unique<DropImages>(); });
  registry.add_record_stage("break", "1", [](const StageParams& params) {
    return std::make_unique<BreakRecord>(params.text("how"));
  });
  registry.add_record_stage("tag", "1",
                            [](const StageParams&) { return std::make_unique<TagRecord>(); });
  registry.add_record_stage(
      "short_answer", "1",
      [](const StageParams& params) {
        return std::make_unique<ShortAnswerFilter>(params.integer("min_chars"));
      },
      {"too_short"});
  registry.add_sample_stage("mask_even", "1",
                            [](const StageParams&) { return std::make_unique<MaskEven>(); });
  registry.add_sample_stage("flip", "1",
                            [](const StageParams&) { return std::make_unique<RandomFlip>(); });
  registry.add_record_stage("throw_record", "1",
                            [](const StageParams&) { return std::make_unique<ThrowingRecord>(); });
  registry.add_sample_stage("throw_sample", "1",
                            [](const StageParams&) { return std::make_unique<ThrowingSample>(); });
  return registry;
}

StageConfig stage(std::string name, StageKind kind, std::string type, std::uint32_t workers = 2) {
  StageConfig config;
  config.name = std::move(name);
  config.kind = kind;
  config.type = std::move(type);
  config.workers = workers;
  return config;
}

PipelineOptions with_test_stages() {
  PipelineOptions options;
  options.stages = test_stages();
  return options;
}

std::map<SampleId, std::size_t> images_per_id(const std::vector<test::SftRecord>& records) {
  std::map<SampleId, std::size_t> ids;
  for (std::size_t i = 0; i < records.size(); ++i) ids[i] = records[i].images;
  return ids;
}

std::map<std::string, std::uint64_t> reasons_of(const test::LedgerContents& ledger) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& rejection : ledger.rejected) ++counts[rejection.reason];
  return counts;
}

}  // namespace

TEST_CASE("a record stage rejects with its named reason and the audit stays clean") {
  const test::TempDir dir;
  const auto records = test::text_records(60);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  auto filter = stage("quality", StageKind::record, "short_answer");
  filter.params.set("min_chars", std::int64_t{80});
  config.stages = {filter};
  const auto run =
      test::run_single_rank_epoch(config, dir.path() / "ledger.jsonl", with_test_stages());
  test::check_and_audit(run, config, images_per_id(records));
  std::set<SampleId> expected;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (answer_bytes(records[i].line) < 80) expected.insert(i);
  REQUIRE(!expected.empty());
  REQUIRE(expected.size() < records.size());
  std::set<SampleId> rejected;
  for (const auto& rejection : run.ledger.rejected) {
    CAPTURE(rejection.detail);
    CHECK(rejection.reason == "quality:too_short");
    CHECK(rejection.detail.find("/records.jsonl:" + std::to_string(rejection.id + 1) + ": ") !=
          std::string::npos);
    CHECK(rejection.detail.find(" bytes of answer") != std::string::npos);
    rejected.insert(rejection.id);
  }
  CHECK(rejected == expected);
}

TEST_CASE("the packer sees the labels a sample stage leaves") {
  const test::TempDir dir;
  const auto records = test::text_records(40);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  config.stages = {stage("mask", StageKind::sample, "mask_even")};
  const auto run =
      test::run_single_rank_epoch(config, dir.path() / "ledger.jsonl", with_test_stages());
  test::check_and_audit(run, config, images_per_id(records));
  CHECK(reasons_of(run.ledger) == std::map<std::string, std::uint64_t>{{"no_labels", 20}});
  for (const auto& rejection : run.ledger.rejected) CHECK(rejection.id % 2 == 0);
}

TEST_CASE("an exception a stage throws rejects that sample with its message, cut to a bound") {
  const test::TempDir dir;
  const auto records = test::image_records(24, false);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  config.stages = {stage("boom", StageKind::record, "throw_record"),
                   stage("pixels", StageKind::sample, "throw_sample", 3)};
  const auto run =
      test::run_single_rank_epoch(config, dir.path() / "ledger.jsonl", with_test_stages());
  test::check_and_audit(run, config, images_per_id(records));
  std::uint64_t record_thrown = 0, sample_thrown = 0;
  for (std::size_t id = 0; id < records.size(); ++id) {
    record_thrown += id % 3 == 0;
    sample_thrown += id % 3 != 0 && id % 5 == 1;
  }
  const auto reasons = reasons_of(run.ledger);
  CHECK(reasons.at("boom:exception") == record_thrown);
  CHECK(reasons.at("pixels:exception") == sample_thrown);
  for (const auto& rejection : run.ledger.rejected) {
    CAPTURE(rejection.reason);
    if (rejection.reason == "boom:exception") {
      CHECK(rejection.detail.size() < 1200);
      CHECK(rejection.detail.find("more bytes)") != std::string::npos);
    } else if (rejection.reason == "pixels:exception") {
      CHECK(rejection.detail.find("no pixels for sample " + std::to_string(rejection.id)) !=
            std::string::npos);
    }
  }
}

TEST_CASE("random flips give the same batches on a rerun, whatever the workers and timing") {
  const test::TempDir dir;
  const auto records = test::image_records(24, false);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto plain = test::small_config({dir.path() / "records.jsonl"});
  auto flipped = plain;
  flipped.stages = {stage("flip", StageKind::sample, "flip", 1)};
  auto jittered = flipped;
  jittered.stages[0].workers = 3;
  jittered.images.workers = 2;
  jittered.flow.worker_jitter_us = 300;
  const auto plain_run = test::run_single_rank_epoch(plain, dir.path() / "p.jsonl");
  const auto first =
      test::run_single_rank_epoch(flipped, dir.path() / "a.jsonl", with_test_stages());
  const auto second =
      test::run_single_rank_epoch(jittered, dir.path() / "b.jsonl", with_test_stages());
  test::check_and_audit(first, flipped, images_per_id(records));
  CHECK(test::batch_digests(first.batches) == test::batch_digests(second.batches));
  // A flip keeps the cost, so the batches hold the same samples; each image is the plain run's,
  // as it is or mirrored, and some are mirrored.
  REQUIRE(first.batches.size() == plain_run.batches.size());
  std::size_t images = 0, mirrored = 0;
  const auto patch = plain.images.geometry.patch_size;
  for (std::size_t b = 0; b < first.batches.size(); ++b) {
    const auto& got = *first.batches[b];
    const auto& base = *plain_run.batches[b];
    REQUIRE(got.step_info().sample_ids == base.step_info().sample_ids);
    REQUIRE(got.pixel_values().size() == base.pixel_values().size());
    const auto grids = got.image_grid_thw();
    std::size_t offset = 0;
    for (std::size_t i = 0; i + 2 < grids.size(); i += 3) {
      const std::size_t height = std::size_t(grids[i + 1]) * patch;
      const std::size_t width = std::size_t(grids[i + 2]) * patch;
      const auto a = got.pixel_values().subspan(offset, height * width * 3);
      const auto p = base.pixel_values().subspan(offset, height * width * 3);
      bool same = std::equal(a.begin(), a.end(), p.begin());
      bool mirror = true;
      for (std::size_t y = 0; y < height && mirror; ++y)
        for (std::size_t x = 0; x < width && mirror; ++x)
          for (std::size_t c = 0; c < 3; ++c)
            if (a[(y * width + x) * 3 + c] != p[(y * width + (width - 1 - x)) * 3 + c]) {
              mirror = false;
              break;
            }
      CHECK((same || mirror));
      mirrored += mirror && !same;
      ++images;
      offset += height * width * 3;
    }
  }
  CHECK(images > 10);
  CHECK(mirrored > 0);
  CHECK(mirrored < images);
}

TEST_CASE("float32 pixel_values are made from the pixels a sample stage leaves") {
  const test::TempDir dir;
  test::write_jsonl(dir.path() / "records.jsonl", test::image_records(16, false));
  auto rgb = test::small_config({dir.path() / "records.jsonl"});
  rgb.stages = {stage("flip", StageKind::sample, "flip", 2)};
  rgb.images.workers = 2;
  auto values = rgb;
  values.images.pixel_values.dtype = PixelDtype::float32;
  const auto rgb_run = test::run_single_rank_epoch(rgb, dir.path() / "u.jsonl", with_test_stages());
  const auto values_run =
      test::run_single_rank_epoch(values, dir.path() / "f.jsonl", with_test_stages());
  const PixelValuesWriter writer(values.images.pixel_values, values.images.geometry);
  REQUIRE(rgb_run.batches.size() == values_run.batches.size());
  std::size_t images = 0;
  for (std::size_t b = 0; b < rgb_run.batches.size(); ++b) {
    const Batch& pixels = *rgb_run.batches[b];
    const Batch& made = *values_run.batches[b];
    REQUIRE(made.step_info().sample_ids == pixels.step_info().sample_ids);
    const auto expected = test::pixel_values_of(pixels, writer, rgb.images.geometry.patch_size);
    CHECK(std::equal(expected.begin(), expected.end(), made.pixel_values().begin(),
                     made.pixel_values().end()));
    images += pixels.image_grid_thw().size() / 3;
  }
  CHECK(images >= 16);
}

TEST_CASE("a record stage may drop images, and a conversation it breaks is its named rejection") {
  const test::TempDir dir;
  auto records = test::image_records(10, false);
  const auto text = test::text_records(10);
  records.insert(records.end(), text.begin(), text.end());
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  config.stages = {stage("text_only", StageKind::record, "drop_images")};
  const auto dropped =
      test::run_single_rank_epoch(config, dir.path() / "dropped.jsonl", with_test_stages());
  std::map<SampleId, std::size_t> no_images;
  for (std::size_t i = 0; i < records.size(); ++i) no_images[i] = 0;
  test::check_and_audit(dropped, config, no_images);
  CHECK(dropped.ledger.rejected.empty());
  for (const auto& batch : dropped.batches) CHECK(batch->pixel_values().empty());

  for (const auto& [how, reason] : {std::pair{"placeholders", "broken:placeholder_mismatch"},
                                    std::pair{"escape", "broken:bad_image_path"}}) {
    CAPTURE(how);
    auto broken = stage("broken", StageKind::record, "break");
    broken.params.set("how", std::string(how));
    config.stages = {broken};
    const auto run = test::run_single_rank_epoch(config, dir.path() / (std::string(how) + ".jsonl"),
                                                 with_test_stages());
    test::check_and_audit(run, config, images_per_id(records));
    CHECK(reasons_of(run.ledger) == std::map<std::string, std::uint64_t>{{reason, 10}});
    for (const auto& rejection : run.ledger.rejected) {
      CHECK(rejection.id < 10);
      CHECK(rejection.detail.find(": after stage broken: ") != std::string::npos);
    }
  }
}

TEST_CASE("a crop box a record stage chooses from the header fixes the grid the decoder makes") {
  const test::TempDir dir;
  const auto records = test::image_records(8, false);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  const auto plain = test::run_single_rank_epoch(config, dir.path() / "plain.jsonl");
  config.stages = {stage("crop", StageKind::record, "crop_left", 1)};
  const auto cropped =
      test::run_single_rank_epoch(config, dir.path() / "cropped.jsonl", with_test_stages());
  test::check_and_audit(cropped, config, images_per_id(records));
  CHECK(cropped.ledger.rejected.empty());
  // Half as wide: every image's grid has fewer columns than uncropped, the same ids emitted.
  std::map<SampleId, std::vector<std::int32_t>> plain_grids, cropped_grids;
  for (const auto* run : {&plain, &cropped})
    for (const auto& batch : run->batches) {
      const auto grids = batch->image_grid_thw();
      std::size_t image = 0;
      for (const auto id : batch->step_info().sample_ids)
        for (std::size_t n = 0; n < records[id].images; ++n, ++image)
          (run == &plain ? plain_grids : cropped_grids)[id].push_back(grids[image * 3 + 2]);
    }
  REQUIRE(plain_grids.size() == cropped_grids.size());
  for (const auto& [id, columns] : plain_grids) {
    CAPTURE(id);
    REQUIRE(cropped_grids.at(id).size() == columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) CHECK(cropped_grids.at(id)[i] < columns[i]);
  }
  auto overflow = stage("crop", StageKind::record, "crop_left", 1);
  overflow.params.set("overflow", true);
  config.stages = {overflow};
  const auto refused =
      test::run_single_rank_epoch(config, dir.path() / "overflow.jsonl", with_test_stages());
  CHECK(reasons_of(refused.ledger) == std::map<std::string, std::uint64_t>{{"crop:bad_crop", 8}});
  CHECK(refused.ledger.rejected.front().detail.find("is not within the") != std::string::npos);
}

TEST_CASE("template variables a record stage sets reach a Jinja template, and no preset") {
  const test::TempDir dir;
  const auto records = test::text_records(12);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  config.stages = {stage("tag", StageKind::record, "tag", 1)};
  // The preset takes no variables: every record is the stage's to explain.
  const auto preset =
      test::run_single_rank_epoch(config, dir.path() / "preset.jsonl", with_test_stages());
  CHECK(reasons_of(preset.ledger) ==
        std::map<std::string, std::uint64_t>{{"template_refused", 12}});
  CHECK(preset.ledger.rejected.front().detail.find("template variable tag was set") !=
        std::string::npos);
  // A ChatML template that writes the variable into its system header.
  const auto chatml = dir.path() / "tagged.jinja";
  std::ofstream(chatml) << "{{ '<|im_start|>system\n' + (tag | default('none')) + "
                           "'<|im_end|>\n' }}{% for m in messages %}{{ '<|im_start|>' + "
                           "m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}";
  config.tokenizer.options.chat_template = ChatTemplate::jinja;
  config.tokenizer.options.template_file = chatml;
  const auto tagged =
      test::run_single_rank_epoch(config, dir.path() / "tagged.jsonl", with_test_stages());
  config.stages.clear();
  const auto untagged = test::run_single_rank_epoch(config, dir.path() / "untagged.jsonl");
  CHECK(tagged.ledger.rejected.empty());
  std::uint64_t tagged_tokens = 0, untagged_tokens = 0;
  for (const auto& batch : tagged.batches) tagged_tokens += batch->step_info().tokens;
  for (const auto& batch : untagged.batches) untagged_tokens += batch->step_info().tokens;
  // "record N" takes at least one token more than "none" in every one of the 12 records.
  CHECK(tagged_tokens >= untagged_tokens + 12);
}

TEST_CASE("a stage's type, kind and parameters are checked when the pipeline is made") {
  const test::TempDir dir;
  test::write_jsonl(dir.path() / "records.jsonl", test::text_records(4));
  auto config = test::small_config({dir.path() / "records.jsonl"});
  const auto error_of = [&](const StageConfig& entry) -> std::string {
    auto c = config;
    c.stages = {entry};
    try {
      Pipeline pipeline(c, DistEnv::single(), with_test_stages());
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of(stage("q", StageKind::record, "nope"))
            .find("stage[0].type: no stage type \"nope\"") == 0);
  CHECK(error_of(stage("q", StageKind::record, "flip"))
            .find("stage[0].kind: record, but stage type \"flip\"") == 0);
  CHECK(error_of(stage("q", StageKind::record, "short_answer"))
            .find("stage[0].params: stage type \"short_answer\" refused its parameters: "
                  "params.min_chars: missing") == 0);
  CHECK(error_of(stage("reader", StageKind::record, "short_answer")).find("stage[0].name") == 0);
}

}  // namespace odbatch

namespace odbatch {

TEST_CASE("a checkpoint of other stages is refused naming the stage, and fail stops at a stage's") {
  const test::TempDir dir;
  const auto records = test::text_records(60);
  test::write_jsonl(dir.path() / "records.jsonl", records);
  auto config = test::small_config({dir.path() / "records.jsonl"});
  config.batching.window = 8;
  auto filter = stage("quality", StageKind::record, "short_answer");
  filter.params.set("min_chars", std::int64_t{80});
  config.stages = {filter};
  Checkpoint checkpoint;
  {
    Pipeline pipeline(config, DistEnv::single(), with_test_stages());
    pipeline.start_epoch(0);
    REQUIRE(pipeline.next_batch());
    checkpoint = pipeline.state();
  }
  auto other = config;
  other.stages[0].params.set("min_chars", std::int64_t{81});
  CHECK_THROWS_WITH_AS(Pipeline::resume(other, DistEnv::single(), checkpoint, with_test_stages()),
                       doctest::Contains("stage.quality"), CheckpointError);
  other.stages.clear();
  CHECK_THROWS_WITH_AS(Pipeline::resume(other, DistEnv::single(), checkpoint, with_test_stages()),
                       doctest::Contains("stage.quality"), CheckpointError);
  CHECK_NOTHROW(Pipeline::resume(config, DistEnv::single(), checkpoint, with_test_stages()));

  // Under on_bad_record = fail a stage's rejection fails the epoch like any other.
  config.source.on_bad_record = BadRecordPolicy::fail;
  Pipeline failing(config, DistEnv::single(), with_test_stages());
  failing.start_epoch(0);
  CHECK_THROWS_WITH_AS(test::drain(failing), doctest::Contains("rejected (quality:too_short)"),
                       PipelineFailure);
}

}  // namespace odbatch
