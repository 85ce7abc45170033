// Ranks configured apart: every key of the pipeline file either decides batches, and a rank whose
// value differs fails every rank at the epoch's first round with an error naming the setting and
// the ranks, or is listed as rank-local with the reason it cannot change a batch.
#include <doctest/doctest.h>
#include <sentencepiece_trainer.h>

#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/config/rank_local_settings.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::uint32_t kWorld = 3;
constexpr std::uint32_t kOddRank = 2;

// The dataset files, and a tokenizer model trained on other text than the dataset's model.
struct Fixture {
  test::TempDir dir;
  std::filesystem::path file = dir.path() / "records.jsonl";
  std::filesystem::path shorter_file = dir.path() / "shorter.jsonl";
  std::filesystem::path same_file_elsewhere = dir.path() / "copy" / "records.jsonl";
  std::filesystem::path other_model;

  Fixture() {
    test::require_dataset();
    const auto records = test::text_records(12);
    test::write_jsonl(file, records);
    test::write_jsonl(shorter_file, {records.begin(), records.end() - 1});
    std::filesystem::create_directories(same_file_elsewhere.parent_path());
    std::filesystem::copy_file(file, same_file_elsewhere);
    const auto prefix = dir.path() / "other";
    const auto status = sentencepiece::SentencePieceTrainer::Train(
        "--input=" + file.string() + " --model_prefix=" + prefix.string() +
        " --model_type=unigram --vocab_size=400 --character_coverage=1.0 --num_threads=1 "
        "--byte_fallback=true --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 "
        "--user_defined_symbols=<|im_start|>,<|im_end|>,<|vision_start|>,<|vision_end|>,"
        "<|image_pad|> --minloglevel=1");
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    other_model = prefix.string() + ".model";
  }

  // The ChatML preset as a Jinja template file.
  void use_jinja(PipelineConfig& c) const {
    const auto chatml = dir.path() / "chatml.jinja";
    std::ofstream(chatml) << "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + "
                             "m['content'] + '<|im_end|>\\n' }}{% endfor %}";
    c.tokenizer.options.chat_template = ChatTemplate::jinja;
    c.tokenizer.options.template_file = chatml;
  }

  PipelineConfig config() const {
    auto c = test::small_config({file});
    c.batching.window = 4;
    c.tokenizer.workers = 1;
    c.flow.scheduler_threads = 1;
    c.flow.round_timeout = std::chrono::seconds(30);
    return c;
  }
};

class PassRecord : public RecordStage {
 public:
  StageVerdict process(StageRecord&, StageContext&) override { return keep(); }
};
class PassSample : public SampleStage {
 public:
  StageVerdict process(StageSample&, StageContext&) override { return keep(); }
};

// Stage types every rank registers: two versions of a record stage and a sample stage, all
// keeping every record.
StageRegistry pass_stages() {
  StageRegistry registry;
  for (const auto& [type, version] : {std::pair{"pass", "1"}, std::pair{"pass_v2", "2"}})
    registry.add_record_stage(type, version,
                              [](const StageParams&) { return std::make_unique<PassRecord>(); });
  registry.add_sample_stage("pass_sample", "1",
                            [](const StageParams&) { return std::make_unique<PassSample>(); });
  return registry;
}

// One [[stage]] named "a" of type pass.
void add_pass_stage(PipelineConfig& c, const Fixture&) {
  StageConfig stage;
  stage.name = "a";
  stage.type = "pass";
  c.stages = {stage};
}

// Runs one epoch on every rank, rank kOddRank with `odd`; returns each rank's error ("" if none).
std::vector<std::string> run_ranks(const PipelineConfig& config, const PipelineConfig& odd) {
  const auto group = InprocGroup::create(kWorld);
  std::vector<std::string> errors(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        PipelineOptions options;
        options.stages = pass_stages();
        Pipeline pipeline(rank == kOddRank ? odd : config, DistEnv::inproc(group, rank, kWorld),
                          std::move(options));
        pipeline.start_epoch(0);
        test::drain(pipeline);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
        if (errors[rank].empty()) errors[rank] = "an empty error";
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

struct BatchDecidingKey {
  std::string key;      // as the pipeline file spells it
  std::string setting;  // the name a mismatch gives
  std::function<void(PipelineConfig&, const Fixture&)> change;
  // Applied to every rank's config before `change`, when the key needs a setting to change.
  std::function<void(PipelineConfig&, const Fixture&)> base = {};
};

// The shorter file read whole every epoch and the other in halves over two epochs: the dataset
// of the shorter and the other file one after the other, in one source or two.
void mix_two_files(PipelineConfig& c, const Fixture& f) {
  c.source.files = {f.shorter_file.string()};
  c.source.mix = {{{f.file.string()}, 2}};
}

std::vector<BatchDecidingKey> batch_deciding_keys() {
  using C = PipelineConfig;
  using F = Fixture;
  return {
      {"source.files", "dataset",
       [](C& c, const F& f) { c.source.files = {f.shorter_file.string()}; }},
      {"source.shuffle", "source.shuffle", [](C& c, const F&) { c.source.shuffle = false; }},
      {"source.split", "source.split",
       [](C& c, const F&) { c.source.split = ShardSplit::strided; }},
      {"source.max_record_bytes", "source.max_record_bytes",
       [](C& c, const F&) { c.source.reader.max_record_bytes = 1 << 20; }},
      {"source.on_bad_record", "source.on_bad_record",
       [](C& c, const F&) { c.source.on_bad_record = BadRecordPolicy::fail; }},
      {"source.conversation_member", "source.conversation_member",
       [](C& c, const F&) { c.source.reader.conversation_member = "txt"; }},
      // The same files, so the same dataset, in one source instead of two.
      {"source.mix.files", "source.mix",
       [](C& c, const F& f) {
         c.source.files = {f.shorter_file.string(), f.file.string()};
         c.source.mix.clear();
       },
       mix_two_files},
      {"source.mix.epochs_per_pass", "source.mix",
       [](C& c, const F&) { c.source.mix[0].epochs_per_pass = 3; }, mix_two_files},
      {"source.mix.fraction", "source.mix",
       [](C& c, const F&) { c.source.mix[0].epochs_per_pass = 4; }, mix_two_files},
      // A source's own templating is a setting of that source.
      {"source.mix.system_prompt", "source.mix[0].system_prompt",
       [](C& c, const F&) { c.source.mix[0].templating.system_prompt = "Be brief."; },
       mix_two_files},
      {"source.mix.template", "source.mix[0].template",
       [](C& c, const F&) { c.source.mix[0].templating.chat_template = ChatTemplate::llama2; },
       mix_two_files},
      {"source.mix.template_file", "source.mix[0].template_file",
       [](C& c, const F& f) {
         auto jinja = c;
         f.use_jinja(jinja);
         c.source.mix[0].templating.template_file = jinja.tokenizer.options.template_file;
       },
       mix_two_files},
      {"source.mix.template_name", "source.mix[0].template_name",
       [](C& c, const F&) { c.source.mix[0].templating.template_name = "tool_use"; },
       mix_two_files},
      {"tokenizer.model", "tokenizer.model",
       [](C& c, const F& f) { c.tokenizer.model = f.other_model; }},
      {"tokenizer.template", "tokenizer.template",
       [](C& c, const F&) { c.tokenizer.options.chat_template = ChatTemplate::llama2; }},
      {"tokenizer.system_prompt", "tokenizer.default_system_prompt",
       [](C& c, const F&) { c.tokenizer.options.default_system_prompt = "Answer briefly."; }},
      {"tokenizer.add_bos", "tokenizer.add_bos",
       [](C& c, const F&) { c.tokenizer.options.add_bos = true; }},
      {"tokenizer.image_piece", "tokenizer.image_piece",
       [](C& c, const F&) { c.tokenizer.options.image_piece = "<|im_end|>"; }},
      {"tokenizer.vision_start_piece", "tokenizer.vision_start_piece",
       [](C& c, const F&) { c.tokenizer.options.vision_start_piece = "<|im_start|>"; }},
      {"tokenizer.vision_end_piece", "tokenizer.vision_end_piece",
       [](C& c, const F&) { c.tokenizer.options.vision_end_piece = "<|im_end|>"; }},
      // The configured format is compared, not only the one it resolves to: conservative.
      {"tokenizer.format", "tokenizer.format",
       [](C& c, const F&) { c.tokenizer.options.format = TokenizerFormat::sentencepiece; }},
      {"tokenizer.template_name", "tokenizer.template_name",
       [](C& c, const F&) { c.tokenizer.options.template_name = "tool_use"; }},
      {"tokenizer.tiktoken_preset", "tokenizer.tiktoken_preset",
       [](C& c, const F&) { c.tokenizer.options.tiktoken_preset = "o200k_base"; }},
      // An evaluation reads in file order: what differs is the shuffle it implies.
      {"pipeline.mode", "source.shuffle", [](C& c, const F&) { c.source.shuffle = false; }},
      {"tokenizer.template_date", "tokenizer.template_date",
       [](C& c, const F&) { c.tokenizer.options.template_date = "2024-07-26"; }},
      {"tokenizer.image_content", "tokenizer.image_content",
       [](C& c, const F&) { c.tokenizer.options.image_content = ImageContent::text; }},
      // These apply to a Jinja template only: the template itself is the first difference.
      {"tokenizer.template_file", "tokenizer.template", [](C& c, const F& f) { f.use_jinja(c); }},
      {"tokenizer.template_variables", "tokenizer.template",
       [](C& c, const F& f) {
         f.use_jinja(c);
         c.tokenizer.options.template_variables["enable_thinking"] = "false";
       }},
      {"tokenizer.bos_token", "tokenizer.template",
       [](C& c, const F& f) {
         f.use_jinja(c);
         c.tokenizer.options.bos_token = "<s>";
       }},
      {"tokenizer.eos_token", "tokenizer.template",
       [](C& c, const F& f) {
         f.use_jinja(c);
         c.tokenizer.options.eos_token = "</s>";
       }},
      {"tokenizer.image_text", "tokenizer.template",
       [](C& c, const F& f) {
         f.use_jinja(c);
         c.tokenizer.options.image_content = ImageContent::text;
         c.tokenizer.options.image_text = "<|image_pad|>";
       }},
      {"images.patch_size", "images.patch_size",
       [](C& c, const F&) { c.images.geometry.patch_size = 16; }},
      {"images.merge_size", "images.merge_size",
       [](C& c, const F&) { c.images.geometry.merge_size = 1; }},
      {"images.min_pixels", "images.min_pixels",
       [](C& c, const F&) { c.images.geometry.min_pixels *= 2; }},
      {"images.max_pixels", "images.max_pixels",
       [](C& c, const F&) { c.images.geometry.max_pixels /= 2; }},
      {"images.max_source_pixels", "images.max_source_pixels",
       [](C& c, const F&) { c.images.decoder_limits.max_source_pixels /= 2; }},
      {"images.max_source_side", "images.max_source_side",
       [](C& c, const F&) { c.images.decoder_limits.max_source_side /= 2; }},
      {"images.max_file_bytes", "images.max_file_bytes",
       [](C& c, const F&) { c.images.file_limits.max_file_bytes /= 2; }},
      {"images.reject_animated", "images.reject_animated",
       [](C& c, const F&) { c.images.decoder_limits.reject_animated = true; }},
      {"images.jpeg_dct_scaling", "images.jpeg_dct_scaling",
       [](C& c, const F&) { c.images.decoder_limits.jpeg_dct_scaling = true; }},
      {"images.pixel_values", "images.pixel_values",
       [](C& c, const F&) { c.images.pixel_values.dtype = PixelDtype::bfloat16; }},
      {"images.rescale_factor", "images.rescale_factor",
       [](C& c, const F&) { c.images.pixel_values.rescale_factor = 1.0 / 127.5; }},
      {"images.image_mean", "images.image_mean",
       [](C& c, const F&) { c.images.pixel_values.image_mean[1] = 0.5; }},
      {"images.image_std", "images.image_std",
       [](C& c, const F&) { c.images.pixel_values.image_std[2] = 0.5; }},
      {"images.temporal_patch_size", "images.temporal_patch_size",
       [](C& c, const F&) { c.images.pixel_values.temporal_patch_size = 1; }},
      {"batching.token_budget", "batching.token_budget",
       [](C& c, const F&) { c.batching.token_budget = 3000; }},
      {"batching.budget_mode", "batching.budget_mode",
       [](C& c, const F&) {
         c.batching.budget_mode = BudgetMode::packed;
         c.flow.layout = BatchLayout::packed;
       }},
      {"batching.patch_budget", "batching.patch_budget",
       [](C& c, const F&) { c.batching.patch_budget = 100'000; }},
      {"batching.max_seq_len", "batching.max_seq_len",
       [](C& c, const F&) { c.batching.max_seq_len = 1024; }},
      {"batching.window", "batching.window", [](C& c, const F&) { c.batching.window = 5; }},
      {"batching.warmup", "batching.warmup",
       [](C& c, const F&) { c.batching.warmup = Warmup::linear; }},
      {"batching.max_defer_rounds", "batching.max_defer_rounds",
       [](C& c, const F&) { c.batching.max_defer_rounds = 2; }},
      {"batching.hold_pct", "batching.hold_pct", [](C& c, const F&) { c.batching.hold_pct = 90; }},
      {"batching.policy", "batching.policy",
       [](C& c, const F&) { c.batching.policy = Policy::reference; }},
      {"batching.loss_scaling", "batching.loss_scaling",
       [](C& c, const F&) { c.batching.loss_scaling = LossScaling::tokens; }},
      {"batching.over_budget", "batching.over_budget",
       [](C& c, const F&) { c.batching.over_budget = OverBudgetPolicy::reject; }},
      {"batching.over_length", "batching.over_length",
       [](C& c, const F&) { c.batching.over_length = OverLengthPolicy::reject; }},
      {"batching.zero_labels", "batching.zero_labels",
       [](C& c, const F&) { c.batching.zero_labels = ZeroLabelPolicy::keep; }},
      {"batching.seed", "batching.seed", [](C& c, const F&) { c.batching.seed = 2; }},
      {"pipeline.layout", "pipeline.layout",
       [](C& c, const F&) { c.flow.layout = BatchLayout::packed; }},
      {"pipeline.pad_id", "pipeline.pad_id", [](C& c, const F&) { c.flow.pad_id = 3; }},
      // A stage is one setting, named after it: a renamed stage is one missing, and the rest
      // (its kind, type and its version, the entry's version, the params) its value.
      {"stage.name", "stage.a", [](C& c, const F&) { c.stages[0].name = "b"; }, add_pass_stage},
      {"stage.kind", "stage.a",
       [](C& c, const F&) {
         c.stages[0].kind = StageKind::sample;
         c.stages[0].type = "pass_sample";
       },
       add_pass_stage},
      {"stage.type", "stage.a", [](C& c, const F&) { c.stages[0].type = "pass_v2"; },
       add_pass_stage},
      {"stage.version", "stage.a", [](C& c, const F&) { c.stages[0].version = "2"; },
       add_pass_stage},
      {"stage.params", "stage.a", [](C& c, const F&) { c.stages[0].params.set("p", 0.5); },
       add_pass_stage},
  };
}

TEST_CASE("every key of the pipeline file is compared across ranks or rank-local with a reason") {
  std::set<std::string> classified;
  for (const auto& row : batch_deciding_keys()) {
    CAPTURE(row.key);
    CHECK(classified.insert(row.key).second);
  }
  for (const auto& local : rank_local_keys()) {
    CAPTURE(local.key);
    CHECK(!local.why.empty());
    CHECK_MESSAGE(classified.insert(std::string(local.key)).second, "both compared and rank-local");
  }
  const auto keys = pipeline_config_keys();
  const std::set<std::string> known(keys.begin(), keys.end());
  for (const auto& key : keys) {
    CAPTURE(key);
    CHECK_MESSAGE(classified.count(key) == 1,
                  "a new key must be compared across ranks (checkpoint_settings() and this "
                  "test's table) or listed in rank_local_keys() with its reason");
  }
  for (const auto& key : classified) {
    CAPTURE(key);
    CHECK_MESSAGE(known.count(key) == 1, "not a key of the pipeline file");
  }
}

TEST_CASE("a rank whose batch-deciding setting differs fails every rank at round 0, naming it") {
  const Fixture fixture;
  const auto config = fixture.config();
  for (const auto& row : batch_deciding_keys()) {
    CAPTURE(row.key);
    auto base = config;
    if (row.base) row.base(base, fixture);
    auto odd = base;
    row.change(odd, fixture);
    const auto errors = run_ranks(base, odd);
    for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
      CAPTURE(rank);
      CAPTURE(errors[rank]);
      CHECK(errors[rank].find("round 0") != std::string::npos);
      CHECK(errors[rank].find("configured differently: " + row.setting + ": ") !=
            std::string::npos);
      CHECK(errors[rank].find(" on rank 2, ") != std::string::npos);
      CHECK(errors[rank].find(" on ranks 0, 1") != std::string::npos);
    }
  }
}

TEST_CASE("ranks that differ only in rank-local keys and file locations run the epoch together") {
  const Fixture fixture;
  const auto config = fixture.config();
  auto odd = config;
  odd.source.files = {fixture.same_file_elsewhere.string()};  // the same file, elsewhere
  odd.tokenizer.workers = 2;
  odd.images.workers = 2;
  odd.flow.reader_capacity = 8;
  odd.flow.lookahead = 2;
  odd.flow.prefetch = 1;
  odd.flow.scheduler_threads = 2;
  odd.flow.worker_jitter_us = 200;
  odd.flow.round_timeout = std::chrono::seconds(20);
  odd.distributed.flight_recorder_rounds = 4;
  const auto errors = run_ranks(config, odd);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK(errors[rank] == "");
  }
}

TEST_CASE("ranks whose stages differ only in workers and declared reasons run together") {
  const Fixture fixture;
  auto config = fixture.config();
  add_pass_stage(config, fixture);
  auto odd = config;
  odd.stages[0].workers = 3;
  odd.stages[0].reasons = {"declared_here"};
  const auto errors = run_ranks(config, odd);
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    CHECK(errors[rank] == "");
  }
}

}  // namespace
}  // namespace odbatch
