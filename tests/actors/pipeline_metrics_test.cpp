// A real pipeline's metrics over the small real dataset: the Prometheus endpoint on a free
// loopback port agrees with stats() after an epoch, answers 404 elsewhere, is off unless
// configured, and a silent client does not hold up the pipeline's destruction; two ranks' scrapes
// during and after an epoch pass promtool, carry each rank's label and every rejection reason
// from zero; the stats JSON agrees with stats() too.
#include <doctest/doctest.h>

#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "metrics_http_client.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "pipeline_test_support.hpp"
#include "promtool_check.hpp"

namespace odbatch {
namespace {

struct Records {
  test::TempDir dir;
  std::filesystem::path file = dir.path() / "records.jsonl";

  Records() {
    test::require_dataset();
    auto records = test::text_records(150);
    for (auto& record : test::image_records(6, false)) records.push_back(std::move(record));
    test::write_jsonl(file, records);
  }
};

PipelineConfig with_metrics(const std::filesystem::path& file) {
  auto config = test::small_config({file});
  config.metrics.enabled = true;
  return config;
}

// The value of the sample `series` (name and labels) in a Prometheus text; fails when absent.
double sample_value(const std::string& text, const std::string& series) {
  const auto at = text.find('\n' + series + ' ');
  REQUIRE_MESSAGE(at != std::string::npos, "no sample " << series);
  std::istringstream value(text.substr(at + series.size() + 2));
  double parsed = 0;
  value >> parsed;
  return parsed;
}

double real(std::uint64_t count) {
  return static_cast<double>(count);
}

}  // namespace

TEST_CASE("after an epoch the scraped counters are those of stats()") {
  const Records records;
  Pipeline pipeline(with_metrics(records.file));
  REQUIRE(pipeline.metrics_port() != 0);
  pipeline.start_epoch(0);
  const auto batches = test::drain(pipeline);
  REQUIRE(!batches.empty());

  const auto answer = test::http_get(pipeline.metrics_port(), "/metrics");
  const auto s = pipeline.stats();
  CHECK(answer.status == 200);
  CHECK(answer.head.find("\r\nContent-Type: text/plain; version=0.0.4") != std::string::npos);
  const auto& text = answer.body;
  CHECK(sample_value(text, "odbatch_records_read_total{rank=\"0\"}") == real(s.records_read));
  CHECK(sample_value(text, "odbatch_samples_emitted_total{rank=\"0\"}") == real(s.samples_emitted));
  CHECK(sample_value(text, "odbatch_batches_total{rank=\"0\"}") == real(batches.size()));
  CHECK(sample_value(text, "odbatch_batches_total{rank=\"0\"}") == real(s.batches));
  CHECK(sample_value(text, "odbatch_idle_batches_total{rank=\"0\"}") == real(s.idle_batches));
  CHECK(sample_value(text, "odbatch_tokens_total{rank=\"0\"}") == real(s.tokens));
  CHECK(sample_value(text, "odbatch_padded_tokens_total{rank=\"0\"}") == real(s.padded_tokens));
  CHECK(sample_value(text, "odbatch_labels_total{rank=\"0\"}") == real(s.labels));
  for (const auto& [reason, count] : s.rejected_by_reason)
    CHECK(sample_value(text, "odbatch_samples_rejected_total{rank=\"0\",reason=\"" + reason +
                                 "\"}") == real(count));
  CHECK(s.round_latency.count > 0);
  CHECK(sample_value(text, "odbatch_round_latency_seconds_count{rank=\"0\"}") ==
        real(s.round_latency.count));
  CHECK(sample_value(text, "odbatch_round_latency_seconds_bucket{rank=\"0\",le=\"+Inf\"}") ==
        real(s.round_latency.count));
  CHECK(sample_value(text, "odbatch_stage_items_total{rank=\"0\",stage=\"emitter\"}") ==
        real(s.emitter.items));
  // Drained: nothing in flight, nothing waiting for the trainer.
  CHECK(sample_value(text, "odbatch_queue_depth{rank=\"0\",queue=\"reader_in_flight\"}") == 0);
  CHECK(sample_value(text, "odbatch_queue_depth{rank=\"0\",queue=\"batch_queue\"}") == 0);
  const auto& config = pipeline.config();
  CHECK(sample_value(text, "odbatch_queue_capacity{rank=\"0\",queue=\"reader_in_flight\"}") ==
        real(config.flow.reader_capacity + reader_lookahead(config)));
  CHECK(sample_value(text, "odbatch_queue_capacity{rank=\"0\",queue=\"batch_queue\"}") ==
        real(config.flow.prefetch));

  CHECK(test::http_get(pipeline.metrics_port(), "/").status == 404);
}

// Every line of a scrape that is a sample of an odbatch_ series.
std::vector<std::string> odbatch_samples(const std::string& text) {
  std::vector<std::string> samples;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("odbatch_", 0) == 0) samples.push_back(line);
  return samples;
}

TEST_CASE("two ranks' live scrapes pass promtool, carry their rank and count every reason") {
  constexpr std::uint32_t kWorld = 2;
  const Records records;
  // One line that is not JSON: a rejection the reader counts, on whichever rank reads it.
  std::ofstream(records.file, std::ios::app) << "{not json\n";
  const auto config = with_metrics(records.file);
  const auto group = InprocGroup::create(kWorld);
  struct Scrapes {
    std::string during, after;
    std::uint64_t malformed = 0;
    std::exception_ptr error;
  };
  std::vector<Scrapes> scrapes(kWorld);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      try {
        Pipeline pipeline(config, DistEnv::inproc(group, rank, kWorld));
        pipeline.start_epoch(0);
        if (!pipeline.next_batch()) throw std::runtime_error("no first batch");
        scrapes[rank].during = test::http_get(pipeline.metrics_port(), "/metrics").body;
        test::drain(pipeline);
        scrapes[rank].after = test::http_get(pipeline.metrics_port(), "/metrics").body;
        const auto& counted = pipeline.stats().rejected_by_reason;
        if (const auto it = counted.find("malformed_json"); it != counted.end())
          scrapes[rank].malformed = it->second;
      } catch (...) {
        scrapes[rank].error = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();

  std::uint64_t malformed = 0;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    CAPTURE(rank);
    const auto& scrape = scrapes[rank];
    REQUIRE_MESSAGE(!scrape.error, test::exception_message(scrape.error));
    malformed += scrape.malformed;
    const std::string label = "rank=\"" + std::to_string(rank) + "\"";
    for (const auto& [when, text] : {std::pair{"during", scrape.during}, {"after", scrape.after}}) {
      CAPTURE(when);
      const auto [status, report] =
          test::promtool_check(text, "live-rank" + std::to_string(rank) + "-" + when);
      INFO(report);
      CHECK(status == 0);
      CHECK(report.empty());
      const auto samples = odbatch_samples(text);
      REQUIRE(samples.size() > 50);
      for (const auto& sample : samples) {
        CAPTURE(sample);
        CHECK(sample.find("{" + label) != std::string::npos);
      }
      CHECK(text.find("odbatch_build_info{" + label +
                      ",version=\"" ODBATCH_VERSION
                      "\",world_size=\"2\"} 1\n") != std::string::npos);
      // A reason of each stage that rejects, counted or not on this rank: the reader's (a
      // record's content, a tar shard's), the image decoder's, the tokenizer's, the packer's.
      for (const char* reason :
           {"malformed_json", "damaged_shard", "pixel_bomb", "template_refused",
            "no_supervised_tokens", "no_labels", "over_budget"})
        CHECK(sample_value(text, "odbatch_samples_rejected_total{" + label + ",reason=\"" + reason +
                                     "\"}") >= 0);
    }
    CHECK(sample_value(scrape.after, "odbatch_samples_rejected_total{" + label +
                                         ",reason=\"malformed_json\"}") == real(scrape.malformed));
  }
  CHECK(malformed == 1);
}

TEST_CASE("the stats JSON of a real epoch parses and agrees with stats()") {
  const Records records;
  Pipeline pipeline(test::small_config({records.file}));
  pipeline.start_epoch(0);
  test::drain(pipeline);
  const auto j = nlohmann::json::parse(pipeline.stats_json());
  const auto s = pipeline.stats();
  CHECK(j["samples_emitted"] == s.samples_emitted);
  CHECK(j["batches"] == s.batches);
  CHECK(j["tokens"] == s.tokens);
  CHECK(j["samples_rejected"] == s.samples_rejected);
  CHECK(j["round_latency"]["count"] == s.round_latency.count);
  CHECK(j["wall_seconds"].get<double>() > 0);
  CHECK(j["samples_per_second"].get<double>() > 0);
  CHECK(j["tokens_per_second"].get<double>() > 0);
  CHECK(j["queues"]["batch_queue"]["capacity"] == pipeline.config().flow.prefetch);
}

TEST_CASE("the endpoint is off unless configured") {
  const Records records;
  Pipeline pipeline(test::small_config({records.file}));
  CHECK(pipeline.metrics_port() == 0);
}

TEST_CASE("a client that sends nothing does not hold up the pipeline's destruction") {
  const Records records;
  std::optional<test::HttpTestClient> silent;
  {
    Pipeline pipeline(with_metrics(records.file));
    silent.emplace(pipeline.metrics_port());
    pipeline.start_epoch(0);
    REQUIRE(pipeline.next_batch());
  }
  CHECK(silent->read_all().empty());  // closed without an answer
}

}  // namespace odbatch

namespace odbatch {
namespace {

// Rejects records whose id is odd.
class RejectOddRecords : public RecordStage {
 public:
  StageVerdict process(StageRecord& record, StageContext&) override {
    return record.id % 2 ? reject("odd") : keep();
  }
};

}  // namespace

TEST_CASE("a stage's reasons are exported from 0, and its work and queue like a built-in stage's") {
  const Records records;
  auto config = with_metrics(records.file);
  StageConfig stage;
  stage.name = "odd";
  stage.type = "reject_odd";
  stage.reasons = {"declared_in_config"};
  config.stages = {stage};
  PipelineOptions options;
  options.stages.add_record_stage(
      "reject_odd", "1", [](const StageParams&) { return std::make_unique<RejectOddRecords>(); },
      {"odd", "never_given"});
  Pipeline pipeline(config, DistEnv::single(), std::move(options));
  const auto before = test::http_get(pipeline.metrics_port(), "/metrics").body;
  for (const char* reason :
       {"odd:odd", "odd:never_given", "odd:declared_in_config", "odd:exception"})
    CHECK(sample_value(before, "odbatch_samples_rejected_total{rank=\"0\",reason=\"" +
                                   std::string(reason) + "\"}") == 0.0);
  pipeline.start_epoch(0);
  test::drain(pipeline);
  const auto after = test::http_get(pipeline.metrics_port(), "/metrics").body;
  test::promtool_check(after, "stage-reasons");
  const auto s = pipeline.stats();
  CHECK(s.rejected_by_reason.at("odd:odd") == 78);
  CHECK(sample_value(after, "odbatch_samples_rejected_total{rank=\"0\",reason=\"odd:odd\"}") == 78);
  CHECK(sample_value(after, "odbatch_stage_items_total{rank=\"0\",stage=\"odd\"}") ==
        real(s.records_read));
  CHECK(sample_value(after, "odbatch_queue_capacity{rank=\"0\",queue=\"odd\"}") > 0);
  const auto json = nlohmann::json::parse(pipeline.stats_json());
  CHECK(json["stages"]["odd"]["items"] == s.records_read);
  CHECK(json["queues"]["odd"]["depth"] == 0);
  CHECK(json["rejected_by_reason"]["odd:odd"] == 78);
}

}  // namespace odbatch
