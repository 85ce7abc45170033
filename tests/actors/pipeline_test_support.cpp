#include "pipeline_test_support.hpp"

#include <doctest/doctest.h>
#include <sentencepiece_processor.h>
#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/text/tokenize_result.hpp"

namespace odbatch::test {
namespace {

const std::filesystem::path kDataDir = ODBATCH_DATA_DIR;

std::filesystem::path sft_file() {
  return kDataDir / "sft/mixed.jsonl";
}
std::filesystem::path tokenizer_model() {
  return kDataDir / "tokenizer/odbatch-unigram-8k.model";
}

std::vector<std::string> image_paths(const nlohmann::json& record) {
  if (const auto one = record.find("image"); one != record.end()) return {one->get<std::string>()};
  if (const auto many = record.find("images"); many != record.end())
    return many->get<std::vector<std::string>>();
  return {};
}

template <class Integer>
void add_all(StableHasher& hasher, std::span<const Integer> values) {
  hasher.add(values.size());
  for (const auto value : values) hasher.add(static_cast<std::uint64_t>(value));
}

// Pixels are most of a batch's bytes: hashed eight at a time.
void add_bytes(StableHasher& hasher, std::span<const std::uint8_t> bytes) {
  hasher.add(bytes.size());
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    word = (word << 8) | bytes[i];
    if (i % 8 == 7 || i + 1 == bytes.size()) {
      hasher.add(word);
      word = 0;
    }
  }
}

// The half-open ranges of the flat arrays that hold each row's tokens.
struct RowSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

std::vector<RowSpan> padded_rows(const Batch& batch, std::int32_t pad_id) {
  const std::size_t width = batch.seq_len();
  const auto ids = batch.input_ids();
  const auto labels = batch.labels();
  const auto mask = batch.attention_mask();
  REQUIRE(ids.size() == std::size_t{batch.rows()} * width);
  REQUIRE(labels.size() == ids.size());
  REQUIRE(mask.size() == ids.size());
  CHECK(batch.cu_seqlens().empty());
  CHECK(batch.position_ids().empty());
  std::vector<RowSpan> rows;
  std::size_t longest = 0;
  for (std::size_t row = 0; row < batch.rows(); ++row) {
    const std::size_t begin = row * width;
    std::size_t length = 0;
    while (length < width && mask[begin + length] == 1) ++length;
    CHECK(length > 0);
    for (std::size_t i = begin + length; i < begin + width; ++i) {
      CHECK(mask[i] == 0);  // the mask is a prefix of ones
      CHECK(ids[i] == pad_id);
      CHECK(labels[i] == kIgnoreLabel);
    }
    longest = std::max(longest, length);
    rows.push_back({begin, begin + length});
  }
  CHECK(longest == width);  // no column of padding only
  return rows;
}

std::vector<RowSpan> packed_rows(const Batch& batch) {
  const auto ids = batch.input_ids();
  const auto cu = batch.cu_seqlens();
  const auto positions = batch.position_ids();
  REQUIRE(cu.size() == std::size_t{batch.rows()} + 1);
  REQUIRE(cu.front() == 0);
  REQUIRE(static_cast<std::size_t>(cu.back()) == ids.size());
  CHECK(batch.seq_len() == ids.size());
  REQUIRE(batch.labels().size() == ids.size());
  REQUIRE(positions.size() == ids.size());
  CHECK(batch.attention_mask().empty());
  std::vector<RowSpan> rows;
  for (std::size_t row = 0; row < batch.rows(); ++row) {
    REQUIRE(cu[row] < cu[row + 1]);
    const auto begin = static_cast<std::size_t>(cu[row]);
    const auto end = static_cast<std::size_t>(cu[row + 1]);
    for (std::size_t i = begin; i < end; ++i)
      CHECK(positions[i] == static_cast<std::int32_t>(i - begin));  // restarts in every row
    // Shifting the whole stream must not make a row predict the next row's first token.
    CHECK(batch.labels()[begin] == kIgnoreLabel);
    rows.push_back({begin, end});
  }
  return rows;
}

void check_idle(const Batch& batch, const BatchExpectations& expect) {
  const auto& info = batch.step_info();
  CHECK(expect.world_size > 1);  // a rank alone never has a step without samples
  CHECK(batch.rows() == 1);
  CHECK(batch.seq_len() == 2);
  CHECK(info.sample_ids.empty());
  CHECK(info.samples == 0);
  CHECK(info.loss_scale == 0.0);
  REQUIRE(batch.labels().size() == 2);
  // One supervised target after the shift keeps the loss finite (loss * 0, never 0 / 0).
  CHECK(batch.labels()[0] == kIgnoreLabel);
  CHECK(batch.labels()[1] != kIgnoreLabel);
  CHECK(batch.pixel_values().empty());
  CHECK(batch.image_grid_thw().empty());
}

std::uint32_t source_file_of(SampleId id, const std::vector<SampleId>& file_starts) {
  const auto after = std::upper_bound(file_starts.begin(), file_starts.end(), id);
  REQUIRE(after != file_starts.begin());
  return static_cast<std::uint32_t>(after - file_starts.begin() - 1);
}

}  // namespace

std::filesystem::path require_dataset() {
  for (const auto& needed :
       {sft_file(), kDataDir / "images", kDataDir / "dirty/dirty.jsonl",
        kDataDir / "dirty/EXPECTED.json", kDataDir / "dirty/images", tokenizer_model()}) {
    if (!std::filesystem::exists(needed))
      FAIL("the dataset is missing: " << needed.string()
                                      << " does not exist; build it with tools/prepare-data.sh");
  }
  return kDataDir;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "odbatch-actors-XXXXXX").string();
  if (!mkdtemp(pattern.data())) FAIL("cannot create a temporary directory from " << pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

const std::vector<SftRecord>& sft_records() {
  static const std::vector<SftRecord> records = [] {
    std::ifstream in(sft_file(), std::ios::binary);
    REQUIRE_MESSAGE(in, "cannot read " << sft_file().string());
    std::vector<SftRecord> all;
    std::string line;
    while (std::getline(in, line)) {
      const auto paths = image_paths(nlohmann::json::parse(line));
      const bool wallpaper = std::any_of(paths.begin(), paths.end(), [](const std::string& p) {
        return p.starts_with("lomiri-wallpapers/");
      });
      all.push_back({line, paths.size(), wallpaper});
    }
    return all;
  }();
  return records;
}

std::vector<SftRecord> text_records(std::size_t count, std::size_t min_bytes) {
  std::vector<SftRecord> chosen;
  for (const auto& record : sft_records()) {
    if (chosen.size() == count) break;
    if (record.images == 0 && record.line.size() >= min_bytes) chosen.push_back(record);
  }
  REQUIRE(chosen.size() == count);
  return chosen;
}

std::vector<SftRecord> image_records(std::size_t count, bool wallpapers) {
  std::vector<SftRecord> chosen;
  for (const auto& record : sft_records()) {
    if (chosen.size() == count) break;
    if (record.images > 0 && (wallpapers || !record.wallpaper)) chosen.push_back(record);
  }
  REQUIRE(chosen.size() == count);
  return chosen;
}

void write_jsonl(const std::filesystem::path& file, const std::vector<SftRecord>& records) {
  std::ofstream out(file, std::ios::binary);
  for (const auto& record : records) out << record.line << '\n';
  REQUIRE_MESSAGE(out.good(), "cannot write " << file.string());
}

PipelineConfig small_config(const std::vector<std::filesystem::path>& files) {
  PipelineConfig config;
  for (const auto& file : files) config.source.files.push_back(file.string());
  config.source.image_root = kDataDir / "images";
  config.tokenizer.model = tokenizer_model();
  config.tokenizer.workers = 2;
  config.images.workers = 1;
  config.images.geometry.max_pixels = 200'704;  // 256 visual tokens at most per image
  config.batching.token_budget = 4096;
  config.batching.max_seq_len = 2048;
  config.batching.window = 64;
  config.batching.seed = 1;
  config.flow.reader_capacity = 64;
  config.flow.scheduler_threads = 2;
  // A hung round fails the test instead of hanging it.
  config.flow.round_timeout = std::chrono::seconds(60);
  return config;
}

std::string exception_message(const std::exception_ptr& error) {
  if (!error) return "no error";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

std::vector<std::shared_ptr<const Batch>> drain(Pipeline& pipeline) {
  std::vector<std::shared_ptr<const Batch>> batches;
  while (auto batch = pipeline.next_batch()) batches.push_back(std::move(batch));
  return batches;
}

std::uint64_t batch_digest(const Batch& batch) {
  StableHasher hasher;
  const auto& info = batch.step_info();
  hasher.add(static_cast<std::uint64_t>(batch.layout())).add(batch.rows()).add(batch.seq_len());
  add_all(hasher, batch.input_ids());
  add_all(hasher, batch.labels());
  add_all(hasher, batch.attention_mask());
  add_all(hasher, batch.cu_seqlens());
  add_all(hasher, batch.position_ids());
  add_bytes(hasher, batch.pixel_values());
  add_all(hasher, batch.image_grid_thw());
  hasher.add(info.epoch).add(info.step).add(info.round).add(info.idle);
  hasher.add(std::bit_cast<std::uint64_t>(info.loss_scale));
  hasher.add(info.samples).add(info.tokens).add(info.labels);
  hasher.add(info.global.samples).add(info.global.tokens).add(info.global.labels);
  hasher.add(info.global_samples_consumed).add(info.global_tokens_consumed);
  add_all(hasher, std::span<const SampleId>(info.sample_ids));
  add_all(hasher, std::span<const std::uint32_t>(info.source_files));
  return hasher.digest();
}

std::vector<std::uint64_t> batch_digests(const std::vector<std::shared_ptr<const Batch>>& batches) {
  std::vector<std::uint64_t> digests;
  for (const auto& batch : batches) digests.push_back(batch_digest(*batch));
  return digests;
}

EpochRun run_single_rank_epoch(const PipelineConfig& config,
                               const std::filesystem::path& ledger_file, PipelineOptions options) {
  options.ledger = ledger_file;
  Pipeline pipeline(config, DistEnv::single(), std::move(options));
  pipeline.start_epoch(0);
  EpochRun run;
  run.batches = drain(pipeline);
  run.ledger = read_ledger(ledger_file, 0);
  return run;
}

std::vector<std::filesystem::path> webdataset_shards(const std::filesystem::path& dir) {
  require_dataset();
  std::vector<std::filesystem::path> found;
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".tar") found.push_back(entry.path());
  }
  if (found.size() < 2)
    FAIL(dir.string() << " holds no shards: the ctest fixture source.webdataset writes them");
  std::sort(found.begin(), found.end());
  return found;
}

LedgerContents read_ledger(const std::filesystem::path& file, std::uint64_t epoch) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot read the ledger " << file.string());
  LedgerContents contents;
  std::string line;
  while (std::getline(in, line)) {
    const auto entry = nlohmann::json::parse(line);
    if (entry.at("epoch").get<std::uint64_t>() != epoch) continue;
    const std::string kind = entry.at("kind");
    if (kind == "step") {
      contents.steps.push_back(entry.at("ids").get<std::vector<SampleId>>());
    } else if (kind == "rejected") {
      contents.rejected.push_back(Rejection{entry.at("id").get<SampleId>(),
                                            entry.at("reason").get<std::string>(),
                                            entry.at("detail").get<std::string>()});
    } else if (kind == "end") {
      contents.end_steps = entry.at("steps").get<std::uint64_t>();
    }
  }
  return contents;
}

VisionTokens vision_tokens(const PipelineConfig& config) {
  sentencepiece::SentencePieceProcessor model;
  const auto status = model.Load(config.tokenizer.model.string());
  REQUIRE_MESSAGE(status.ok(), config.tokenizer.model.string() << ": " << status.ToString());
  const auto id_of = [&](const std::string& piece) {
    const int id = model.PieceToId(piece);
    REQUIRE_MESSAGE(id != model.unk_id(), piece << " is not a piece of the model");
    return static_cast<std::int32_t>(id);
  };
  const auto& options = config.tokenizer.options;
  return {id_of(options.vision_start_piece), id_of(options.vision_end_piece),
          id_of(options.image_piece)};
}

EmittedStep check_batch(const Batch& batch, const BatchExpectations& expect) {
  const auto& info = batch.step_info();
  const auto& config = *expect.config;
  CAPTURE(info.step);
  EmittedStep step;
  step.round = info.round;
  step.step_in_epoch = info.step;
  step.totals = info.global;
  step.loss_scale = info.loss_scale;
  CHECK(batch.layout() == config.flow.layout);
  if (info.idle) {
    check_idle(batch, expect);
    return step;
  }

  REQUIRE(info.sample_ids.size() == batch.rows());
  REQUIRE(info.source_files.size() == batch.rows());
  CHECK(info.samples == batch.rows());
  const auto rows = batch.layout() == BatchLayout::padded ? padded_rows(batch, config.flow.pad_id)
                                                          : packed_rows(batch);
  const auto ids = batch.input_ids();
  const auto labels = batch.labels();
  const auto grids = batch.image_grid_thw();
  REQUIRE(grids.size() % 3 == 0);
  const auto& geometry = config.images.geometry;
  const std::uint32_t merge_area = geometry.merge_size * geometry.merge_size;
  std::size_t next_image = 0;
  std::uint64_t pixel_bytes = 0;
  std::uint64_t visual_tokens = 0;
  std::uint64_t sum_tokens = 0, sum_labels = 0, longest = 0;

  for (std::size_t row = 0; row < rows.size(); ++row) {
    const SampleId id = info.sample_ids[row];
    CAPTURE(id);
    const auto [begin, end] = rows[row];
    SampleCost cost{id, static_cast<std::uint32_t>(end - begin), 0, 0};
    for (std::size_t i = begin; i < end; ++i) {
      // Unshifted labels: the token itself where supervised.
      if (labels[i] != kIgnoreLabel) CHECK(labels[i] == ids[i]);
      if (i > begin && labels[i] != kIgnoreLabel) ++cost.labels;
    }
    CHECK(cost.labels > 0);  // zero_labels = reject: nothing unsupervised is emitted

    const auto known = expect.images_per_sample.find(id);
    REQUIRE_MESSAGE(known != expect.images_per_sample.end(), "id " << id << " is not in the data");
    std::size_t images_in_row = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (ids[i] != expect.vision.start) continue;
      ++images_in_row;
      REQUIRE(next_image * 3 + 2 < grids.size());
      const std::int32_t t = grids[next_image * 3], h = grids[next_image * 3 + 1],
                         w = grids[next_image * 3 + 2];
      ++next_image;
      CHECK(t == 1);
      REQUIRE(h > 0);
      REQUIRE(w > 0);
      CHECK(h % static_cast<std::int32_t>(geometry.merge_size) == 0);
      CHECK(w % static_cast<std::int32_t>(geometry.merge_size) == 0);
      const auto patches = static_cast<std::uint32_t>(h * w);
      cost.patches += patches;
      pixel_bytes += std::uint64_t{patches} * geometry.patch_size * geometry.patch_size * 3;
      // The image's visual tokens sit between its start and end tokens, one per merged patch.
      std::size_t pads = 0;
      std::size_t at = i + 1;
      while (at < end && ids[at] == expect.vision.pad) ++pads, ++at;
      CHECK(pads == patches / merge_area);
      visual_tokens += patches / merge_area;
      REQUIRE(at < end);
      CHECK(ids[at] == expect.vision.end);
    }
    CHECK(images_in_row == known->second);
    CHECK(info.source_files[row] == source_file_of(id, expect.file_starts));
    sum_tokens += cost.tokens;
    sum_labels += cost.labels;
    longest = std::max<std::uint64_t>(longest, cost.tokens);
    step.samples.push_back(cost);
  }
  CHECK(next_image * 3 == grids.size());
  CHECK(batch.pixel_values().size() == pixel_bytes);
  // No image token outside an image's span.
  CHECK(static_cast<std::uint64_t>(std::count(ids.begin(), ids.end(), expect.vision.pad)) ==
        visual_tokens);

  CHECK(info.tokens == sum_tokens);
  CHECK(info.labels == sum_labels);
  const auto& batching = config.batching;
  const std::uint64_t used =
      batching.budget_mode == BudgetMode::padded ? longest * rows.size() : sum_tokens;
  std::uint64_t patches = 0;
  for (const auto& sample : step.samples) patches += sample.patches;
  step.over_budget = used > batching.token_budget ||
                     (batching.patch_budget > 0 && patches > batching.patch_budget);
  if (step.over_budget) CHECK(rows.size() == 1);  // only a lone sample may exceed the budget
  CHECK(info.over_budget == step.over_budget);
  if (batch.layout() == BatchLayout::padded && batching.budget_mode == BudgetMode::padded)
    CHECK((std::uint64_t{batch.rows()} * batch.seq_len() <= batching.token_budget ||
           batch.rows() == 1));

  CHECK(info.global.samples >= info.samples);
  CHECK(info.global.tokens >= info.tokens);
  CHECK(info.global.labels >= info.labels);
  if (expect.world_size == 1) {
    CHECK(info.global == StepTotals{info.samples, info.tokens, info.labels});
  }
  if (batching.loss_scaling == LossScaling::labels) {
    const double wanted = static_cast<double>(expect.world_size) *
                          static_cast<double>(info.labels) /
                          static_cast<double>(info.global.labels);
    CHECK(info.loss_scale == doctest::Approx(wanted));
  }
  return step;
}

RankLedger check_epoch(const std::vector<std::shared_ptr<const Batch>>& batches,
                       const BatchExpectations& expect) {
  RankLedger ledger;
  std::uint64_t samples = 0, tokens = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const auto& info = batches[i]->step_info();
    CHECK(info.step == i);
    CHECK(info.epoch == batches.front()->step_info().epoch);
    samples += info.global.samples;
    tokens += info.global.tokens;
    CHECK(info.global_samples_consumed == samples);
    CHECK(info.global_tokens_consumed == tokens);
    ledger.steps.push_back(check_batch(*batches[i], expect));
  }
  return ledger;
}

AuditReport check_and_audit(const EpochRun& epoch, const PipelineConfig& config,
                            const std::map<SampleId, std::size_t>& images_per_sample,
                            std::vector<SampleId> file_starts) {
  BatchExpectations expect;
  expect.config = &config;
  expect.vision = vision_tokens(config);
  expect.file_starts = std::move(file_starts);
  expect.images_per_sample = images_per_sample;
  auto rank = check_epoch(epoch.batches, expect);
  rank.rejected = epoch.ledger.rejected;
  std::vector<SampleId> every_id;
  for (const auto& [id, images] : images_per_sample) every_id.push_back(id);
  const auto report = audit_epoch(every_id, std::span(&rank, 1), config.batching);
  INFO(report.summary());
  CHECK(report.ok());
  return report;
}

std::vector<RankRun> cut_epoch(const PipelineConfig& config, std::uint32_t world,
                               std::uint64_t steps,
                               const std::function<PipelineOptions()>& options) {
  return run_ranks(world, [&](DistEnv dist, RankRun& run) {
    Pipeline pipeline(config, std::move(dist), options ? options() : PipelineOptions{});
    pipeline.start_epoch(0);
    for (std::uint64_t i = 0; i < steps; ++i) run.batches.push_back(pipeline.next_batch());
    run.part = pipeline.state();
    pipeline.depart();
  });
}

std::vector<std::uint8_t> pixel_values_of(const Batch& rgb, const PixelValuesWriter& writer,
                                          std::uint32_t patch_size) {
  std::vector<std::uint8_t> values;
  const auto grids = rgb.image_grid_thw();
  std::size_t rgb_at = 0;
  for (std::size_t i = 0; i + 2 < grids.size(); i += 3) {
    const auto height = static_cast<std::uint32_t>(grids[i + 1]) * patch_size;
    const auto width = static_cast<std::uint32_t>(grids[i + 2]) * patch_size;
    const std::size_t rgb_bytes = std::size_t{width} * height * 3;
    std::vector<std::uint8_t> image(writer.bytes_for(width, height));
    writer.write(rgb.pixel_values().subspan(rgb_at, rgb_bytes), width, height, image);
    values.insert(values.end(), image.begin(), image.end());
    rgb_at += rgb_bytes;
  }
  return values;
}

}  // namespace odbatch::test
