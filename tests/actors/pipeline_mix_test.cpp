// Two sources of the real dataset mixed in one pipeline: the first 40 records of openai.jsonl read
// every epoch and 45 ShareGPT records ([[source.mix]], epochs_per_pass = 3) read a third each
// epoch. Over three epochs each ShareGPT record is emitted or rejected exactly once and the
// OpenAI ones every epoch, each epoch's audit clean; the same seed gives the same batches, a
// resumed epoch the rest of the batches exactly, and a checkpoint of another mix is refused.
// `odbatch audit` passes the run's ledger and fails one that emits a record of another epoch's
// chunk.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "odbatch/core/epoch_selection.hpp"
#include "odbatch/core/ledger.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

using test::RankRun;
using test::run_ranks;

constexpr std::uint64_t kMainRecords = 40;
constexpr std::uint64_t kMixRecords = 45;
constexpr std::uint64_t kEpochsPerPass = 3;

// `count` lines of `file` from line `first` on, without images.
std::vector<std::string> lines_of(const std::filesystem::path& file, std::size_t first,
                                  std::size_t count) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::string> lines;
  std::size_t number = 0;
  for (std::string line; lines.size() < count && std::getline(in, line); ++number)
    if (number >= first && line.find("\"image") == std::string::npos) lines.push_back(line);
  REQUIRE(lines.size() == count);
  return lines;
}

void write_lines(const std::filesystem::path& file, const std::vector<std::string>& lines) {
  std::ofstream out(file, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
  REQUIRE_MESSAGE(out.good(), "cannot write " << file.string());
}

struct MixFixture {
  test::TempDir dir;
  PipelineConfig config;

  MixFixture() {
    const auto data = test::require_dataset();
    const auto main_file = dir.path() / "openai-first.jsonl";
    const auto mix_file = dir.path() / "sharegpt-slice.jsonl";
    write_lines(main_file, lines_of(data / "sft/openai.jsonl", 0, kMainRecords));
    write_lines(mix_file, lines_of(data / "sft/sharegpt.jsonl", 2000, kMixRecords));
    config = test::small_config({main_file});
    config.source.mix = {{{mix_file.string()}, kEpochsPerPass}};
  }

  std::filesystem::path ledger() const { return dir.path() / "ledger.jsonl"; }
};

// Every id an epoch's ledger emitted or rejected, each as often as it was.
std::multiset<SampleId> accounted(const test::LedgerContents& ledger) {
  std::multiset<SampleId> ids;
  for (const auto& step : ledger.steps) ids.insert(step.begin(), step.end());
  for (const auto& rejection : ledger.rejected) ids.insert(rejection.id);
  return ids;
}

// Checks the epoch's batches and audits them against the ids the epoch selects.
void check_and_audit(const std::vector<std::shared_ptr<const Batch>>& batches,
                     const test::LedgerContents& ledger, const PipelineConfig& config,
                     std::uint64_t epoch) {
  const std::vector<MixedSource> sources{{0, kMainRecords, 1},
                                         {kMainRecords, kMixRecords, kEpochsPerPass}};
  const EpochSelection selection(sources, config.batching.seed, epoch, config.source.shuffle);
  std::vector<SampleId> expected;
  test::BatchExpectations expect;
  expect.config = &config;
  expect.vision = test::vision_tokens(config);
  expect.file_starts = {0, kMainRecords};
  for (std::uint64_t i = 0; i < selection.size(); ++i) {
    expected.push_back(selection[i]);
    expect.images_per_sample[selection[i]] = 0;
  }
  auto rank = test::check_epoch(batches, expect);
  rank.rejected = ledger.rejected;
  const auto report = audit_epoch(expected, std::span(&rank, 1), config.batching);
  INFO(report.summary());
  CHECK(report.ok());
}

struct AuditRun {
  int status = -1;
  std::string output;
};

AuditRun audit_ledger(const std::filesystem::path& ledger) {
  const std::string command = std::string(ODBATCH_CLI) + " audit '" + ledger.string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE_MESSAGE(pipe, "cannot run " << command);
  AuditRun run;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::multiset<SampleId> emitted_ids(const std::vector<RankRun>& runs) {
  std::multiset<SampleId> ids;
  for (const auto& run : runs)
    for (const auto& batch : run.batches)
      for (const auto id : batch->step_info().sample_ids) ids.insert(id);
  return ids;
}

// The ledger with epoch 0's first record of the mixed source replaced by `id`.
void write_with_replaced_id(const std::filesystem::path& from, const std::filesystem::path& to,
                            SampleId id) {
  std::ifstream in(from);
  std::ofstream out(to);
  bool replaced = false;
  for (std::string line; std::getline(in, line);) {
    auto entry = nlohmann::json::parse(line);
    if (!replaced && entry["kind"] == "step" && entry["epoch"] == 0) {
      for (auto& step_id : entry["ids"]) {
        if (step_id.get<SampleId>() >= kMainRecords) {
          step_id = id;
          replaced = true;
          break;
        }
      }
    }
    out << entry.dump() << '\n';
  }
  REQUIRE(replaced);
}

}  // namespace

TEST_CASE("mixed sources: the main source every epoch, the other once over its epochs_per_pass") {
  const MixFixture fixture;
  std::multiset<SampleId> mix_seen;
  Pipeline pipeline(fixture.config, DistEnv::single(), PipelineOptions{fixture.ledger()});
  for (std::uint64_t epoch = 0; epoch < kEpochsPerPass; ++epoch) {
    CAPTURE(epoch);
    pipeline.start_epoch(epoch);
    CHECK(pipeline.shard_records() == kMainRecords + kMixRecords / kEpochsPerPass);
    const auto batches = test::drain(pipeline);
    const auto ledger = test::read_ledger(fixture.ledger(), epoch);
    const auto ids = accounted(ledger);
    CHECK(ids.size() == kMainRecords + kMixRecords / kEpochsPerPass);
    for (SampleId id = 0; id < kMainRecords; ++id) CHECK(ids.count(id) == 1);
    for (const auto id : ids)
      if (id >= kMainRecords) mix_seen.insert(id);
    check_and_audit(batches, ledger, fixture.config, epoch);
  }
  CHECK(mix_seen.size() == kMixRecords);
  for (SampleId id = kMainRecords; id < kMainRecords + kMixRecords; ++id)
    CHECK(mix_seen.count(id) == 1);
  CHECK(pipeline.dataset_records() == kMainRecords + kMixRecords);

  const auto clean = audit_ledger(fixture.ledger());
  CAPTURE(clean.output);
  CHECK(clean.status == 0);
  CHECK(clean.output.find("audit passed: 3 epoch(s)") != std::string::npos);
  // A record of epoch 1's chunk emitted in epoch 0, instead of one of epoch 0's.
  const std::vector<MixedSource> sources{{0, kMainRecords, 1},
                                         {kMainRecords, kMixRecords, kEpochsPerPass}};
  const EpochSelection epoch1(sources, fixture.config.batching.seed, 1, true);
  const SampleId other = epoch1[epoch1.size() - 1];
  REQUIRE(other >= kMainRecords);
  const auto tampered = fixture.dir.path() / "tampered.jsonl";
  write_with_replaced_id(fixture.ledger(), tampered, other);
  const auto failed = audit_ledger(tampered);
  CAPTURE(failed.output);
  CHECK(failed.status == 1);
  CHECK(failed.output.find("id " + std::to_string(other)) != std::string::npos);
  CHECK(failed.output.find("missing") != std::string::npos);
}

TEST_CASE("mixed sources: the same seed gives the same batches, a resumed epoch the rest exactly") {
  const MixFixture fixture;
  const auto digests_of = [&](std::uint64_t epoch) {
    Pipeline pipeline(fixture.config);
    pipeline.start_epoch(epoch);
    return test::batch_digests(test::drain(pipeline));
  };
  const auto epoch4 = digests_of(4);  // chunk 1 of the second pass
  REQUIRE(epoch4.size() > 4);
  CHECK(digests_of(4) == epoch4);
  CHECK(digests_of(1) != epoch4);  // chunk 1 of the first pass: other records

  const std::uint64_t cut = epoch4.size() / 2;
  Checkpoint checkpoint;
  {
    Pipeline pipeline(fixture.config);
    pipeline.start_epoch(4);
    for (std::uint64_t i = 0; i < cut; ++i) REQUIRE(pipeline.next_batch());
    checkpoint = pipeline.state();
  }
  const auto resumed = Pipeline::resume(fixture.config, DistEnv::single(), checkpoint);
  CHECK(
      test::batch_digests(test::drain(*resumed)) ==
      std::vector<std::uint64_t>(epoch4.begin() + static_cast<std::ptrdiff_t>(cut), epoch4.end()));

  auto other = fixture.config;
  other.source.mix[0].epochs_per_pass = 5;
  try {
    Pipeline::resume(other, DistEnv::single(), checkpoint);
    FAIL("a checkpoint of another mix was resumed");
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find("source.mix") != std::string::npos);
    CHECK(message.find("over 3 epochs") != std::string::npos);
    CHECK(message.find("over 5 epochs") != std::string::npos);
  }
}

TEST_CASE("mixed sources: two ranks resumed onto three emit the rest of the epoch's selection") {
  const MixFixture fixture;
  constexpr std::uint64_t kEpoch = 2;  // the last chunk of the first pass
  const auto whole = run_ranks(1, [&](DistEnv dist, RankRun& run) {
    Pipeline pipeline(fixture.config, std::move(dist));
    pipeline.start_epoch(kEpoch);
    run.batches = test::drain(pipeline);
  });
  const auto expected = emitted_ids(whole);
  const std::vector<MixedSource> sources{{0, kMainRecords, 1},
                                         {kMainRecords, kMixRecords, kEpochsPerPass}};
  const EpochSelection selection(sources, fixture.config.batching.seed, kEpoch, true);
  std::set<SampleId> selected;
  for (std::uint64_t i = 0; i < selection.size(); ++i) selected.insert(selection[i]);
  for (const auto id : expected) CHECK(selected.count(id) == 1);

  const auto cut = run_ranks(2, [&](DistEnv dist, RankRun& run) {
    Pipeline pipeline(fixture.config, std::move(dist));
    pipeline.start_epoch(kEpoch);
    run.batches.push_back(pipeline.next_batch());
    REQUIRE(run.batches.back());
    run.part = pipeline.state();
    pipeline.depart();  // together: a rank that merely stopped would abort the other's rounds
  });
  const auto checkpoint = join_checkpoint_parts(std::vector<Checkpoint>{cut[0].part, cut[1].part});
  const auto resumed = run_ranks(3, [&](DistEnv dist, RankRun& run) {
    const auto pipeline = Pipeline::resume(fixture.config, std::move(dist), checkpoint);
    run.batches = test::drain(*pipeline);
  });
  auto ids = emitted_ids(cut);
  const auto rest = emitted_ids(resumed);
  ids.insert(rest.begin(), rest.end());
  CHECK(ids == expected);
}

}  // namespace odbatch

namespace odbatch {
namespace {

// Each sample's token count in an epoch's padded batches.
std::map<SampleId, std::size_t> tokens_per_sample(
    const std::vector<std::shared_ptr<const Batch>>& batches) {
  std::map<SampleId, std::size_t> tokens;
  for (const auto& batch : batches) {
    if (batch->step_info().idle) continue;
    const auto& ids = batch->step_info().sample_ids;
    for (std::size_t row = 0; row < ids.size(); ++row) {
      const auto mask = batch->attention_mask().subspan(row * batch->seq_len(), batch->seq_len());
      tokens[ids[row]] = static_cast<std::size_t>(std::count(mask.begin(), mask.end(), 1));
    }
  }
  return tokens;
}

}  // namespace

TEST_CASE("mixed sources: a source's own system prompt reaches its records only") {
  const MixFixture fixture;
  const auto epoch_tokens = [&](const PipelineConfig& config) {
    Pipeline pipeline(config);
    pipeline.start_epoch(0);
    return tokens_per_sample(test::drain(pipeline));
  };
  auto prompted = fixture.config;
  prompted.source.mix[0].templating.system_prompt =
      "You answer with a fortune or a command's description.";
  const auto plain = epoch_tokens(fixture.config);
  const auto with_prompt = epoch_tokens(prompted);
  REQUIRE(plain.size() == with_prompt.size());
  // The prompt goes where a conversation has no system message of its own.
  const auto mix_lines =
      lines_of(test::require_dataset() / "sft/sharegpt.jsonl", 2000, kMixRecords);
  std::size_t longer = 0;
  for (const auto& [id, tokens] : plain) {
    CAPTURE(id);
    if (id < kMainRecords) {
      CHECK(with_prompt.at(id) == tokens);
      continue;
    }
    const bool has_system =
        mix_lines[id - kMainRecords].find("\"from\": \"system\"") != std::string::npos;
    CHECK((with_prompt.at(id) > tokens) == !has_system);
    longer += with_prompt.at(id) > tokens;
  }
  CHECK(longer > 0);
}

}  // namespace odbatch
