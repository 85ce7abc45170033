// The dirty dataset (data/dirty) through the whole pipeline, against its EXPECTED.json: every
// good line is emitted once, every bad line is rejected with the expected reason category and
// its file:line in the detail, under on_bad_record = fail the epoch stops at the first bad
// record with an error that names it, and the log says what was rejected where.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "log_capture.hpp"
#include "odbatch/core/ledger.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

struct DirtyDataset {
  std::filesystem::path file;
  std::filesystem::path images;
  nlohmann::json expected;
};

DirtyDataset dirty_dataset() {
  const auto dir = test::require_dataset() / "dirty";
  return {dir / "dirty.jsonl", dir / "images",
          nlohmann::json::parse(std::ifstream(dir / "EXPECTED.json"))};
}

PipelineConfig dirty_config(const DirtyDataset& dirty) {
  auto config = test::small_config({dirty.file});
  config.source.image_root = dirty.images;
  // EXPECTED.json counts a sample over the length limit as bad, so it must not be truncated.
  config.batching.over_length = OverLengthPolicy::reject;
  config.batching.max_seq_len = 4096;
  config.batching.token_budget = 8192;
  config.batching.window = 16;
  return config;
}

bool reason_expected(const nlohmann::json& entry, const std::string& reason) {
  if (entry.at("reason") == reason) return true;
  const auto also = entry.find("also_accepted");
  return also != entry.end() && std::find(also->begin(), also->end(), reason) != also->end();
}

std::string location(const DirtyDataset& dirty, const nlohmann::json& entry) {
  return dirty.file.string() + ":" + std::to_string(entry.at("line").get<std::uint64_t>()) + ":";
}

TEST_CASE("the dirty dataset: good lines emitted, bad lines rejected as EXPECTED.json says") {
  const auto dirty = dirty_dataset();
  const auto config = dirty_config(dirty);
  const test::TempDir dir;
  const auto ledger_file = dir.path() / "ledger.jsonl";
  Pipeline pipeline(config, DistEnv::single(), PipelineOptions{ledger_file});
  const auto records = dirty.expected.at("records").get<std::uint64_t>();
  REQUIRE(pipeline.dataset_records() == records);
  pipeline.start_epoch(0);
  const auto batches = test::drain(pipeline);

  std::map<SampleId, int> emitted;
  for (const auto& batch : batches)
    for (const auto id : batch->step_info().sample_ids) ++emitted[id];
  const auto ledger = test::read_ledger(ledger_file, 0);
  std::map<SampleId, Rejection> rejected;
  for (const auto& rejection : ledger.rejected) {
    CAPTURE(rejection.id);
    CHECK(rejected.emplace(rejection.id, rejection).second);  // rejected once
  }

  test::BatchExpectations expect;
  expect.config = &pipeline.config();
  expect.vision = test::vision_tokens(config);
  expect.file_starts = {0};
  std::uint64_t good = 0, bad = 0;
  for (const auto& entry : dirty.expected.at("expected")) {
    const std::string status = entry.at("status");
    CAPTURE(entry.dump());
    if (status == "ignored") continue;  // a blank line holds no record, so no id
    const auto id = entry.at("record").get<SampleId>();
    if (status == "good") {
      ++good;
      CHECK(emitted[id] == 1);
      CHECK(rejected.count(id) == 0);
      expect.images_per_sample[id] = entry.at("images").size();
      continue;
    }
    REQUIRE(status == "bad");
    ++bad;
    CHECK(emitted.count(id) == 0);
    const auto rejection = rejected.find(id);
    REQUIRE(rejection != rejected.end());
    CAPTURE(rejection->second.detail);
    CHECK(reason_expected(entry, rejection->second.reason));
    CHECK(rejection->second.detail.find(location(dirty, entry)) != std::string::npos);
  }
  CHECK(good == dirty.expected.at("good").get<std::uint64_t>());
  CHECK(bad == dirty.expected.at("bad").get<std::uint64_t>());
  CHECK(emitted.size() == good);
  CHECK(rejected.size() == bad);

  // The good samples' batches are as sound as any others.
  auto rank = test::check_epoch(batches, expect);
  rank.rejected = ledger.rejected;
  std::vector<SampleId> every_id(records);
  std::iota(every_id.begin(), every_id.end(), SampleId{0});
  const auto report = audit_epoch(every_id, std::span(&rank, 1), config.batching);
  INFO(report.summary());
  CHECK(report.ok());
  std::uint64_t by_reason = 0;
  for (const auto& [reason, count] : pipeline.stats().rejected_by_reason) by_reason += count;
  CHECK(by_reason == bad);
}

TEST_CASE("on_bad_record = fail stops the epoch at the first bad record, naming it") {
  const auto dirty = dirty_dataset();
  auto config = dirty_config(dirty);
  config.source.on_bad_record = BadRecordPolicy::fail;
  config.source.shuffle = false;  // shard order is file order: the first bad line comes first
  // Without warm-up the first round waits for a full window, so it cannot finish before line 2.
  config.batching.warmup = Warmup::none;
  const auto& entries = dirty.expected.at("expected");
  const auto first_bad = std::find_if(entries.begin(), entries.end(), [](const auto& entry) {
    return entry.at("status") == "bad";
  });
  REQUIRE(first_bad != entries.end());

  Pipeline pipeline(config);
  pipeline.start_epoch(0);
  std::string message;
  try {
    test::drain(pipeline);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find(location(dirty, *first_bad)) != std::string::npos);
  CHECK(message.find(first_bad->at("reason").get<std::string>()) != std::string::npos);
  CHECK(pipeline.stats().batches == 0);  // the first round never completed
}

TEST_CASE("a dirty epoch's log: its first rejections located, its counts by reason, each round") {
  const auto dirty = dirty_dataset();
  auto config = dirty_config(dirty);
  config.source.shuffle = false;
  std::string log;
  StatsSnapshot stats;
  {
    const test::LogCapture capture(LogLevel::debug);
    Pipeline pipeline(config);
    pipeline.start_epoch(0);
    test::drain(pipeline);
    stats = pipeline.stats();
    log = capture.text();
  }
  CAPTURE(log);
  REQUIRE(stats.samples_rejected > 5);
  std::vector<std::string> lines;
  std::istringstream stream(log);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  const auto count = [&](const std::string& level, const std::string& text) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
      return line.find("[" + level + "]") != std::string::npos &&
             line.find(text) != std::string::npos;
    });
  };
  for (const auto& line : lines) CHECK(line.find("] [rank 0] ") != std::string::npos);
  CHECK(count("info", "epoch 0 started") == 1);
  // The first five rejections are warnings that name the file and line, the rest debug lines.
  CHECK(count("warning", ": sample ") == 5);
  CHECK(count("warning", dirty.file.string() + ":") == 5);
  CHECK(count("warning", "(further rejections at debug level)") == 1);
  CHECK(count("debug", ": sample ") == static_cast<std::ptrdiff_t>(stats.samples_rejected - 5));
  // Every round planned says so at debug level, the last one that the epoch is over.
  CHECK(count("debug", "epoch 0 round 0: ") == 1);
  CHECK(count("debug", ", epoch over") == 1);
  CHECK(count("info", "epoch 0 ended after " + std::to_string(stats.batches) + " steps: " +
                          std::to_string(stats.samples_emitted) + " samples emitted, " +
                          std::to_string(stats.samples_rejected) + " rejected") == 1);
  std::string reasons;
  for (const auto& [reason, n] : stats.rejected_by_reason)
    reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(n);
  CHECK(count("warning", "epoch 0 rejected " + std::to_string(stats.samples_rejected) +
                             " records: " + reasons) == 1);
}

}  // namespace
}  // namespace odbatch
