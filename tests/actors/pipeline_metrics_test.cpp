// A real pipeline's metrics over the small real dataset: the Prometheus endpoint on a free
// loopback port agrees with stats() after an epoch, answers 404 elsewhere, is off unless
// configured, and a silent client does not hold up the pipeline's destruction; the stats JSON
// agrees with stats() too.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "metrics_http_client.hpp"
#include "pipeline_test_support.hpp"

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
  CHECK(sample_value(text, "odbatch_records_read_total") == real(s.records_read));
  CHECK(sample_value(text, "odbatch_samples_emitted_total") == real(s.samples_emitted));
  CHECK(sample_value(text, "odbatch_batches_total") == real(batches.size()));
  CHECK(sample_value(text, "odbatch_batches_total") == real(s.batches));
  CHECK(sample_value(text, "odbatch_idle_batches_total") == real(s.idle_batches));
  CHECK(sample_value(text, "odbatch_tokens_total") == real(s.tokens));
  CHECK(sample_value(text, "odbatch_padded_tokens_total") == real(s.padded_tokens));
  CHECK(sample_value(text, "odbatch_labels_total") == real(s.labels));
  for (const auto& [reason, count] : s.rejected_by_reason)
    CHECK(sample_value(text, "odbatch_samples_rejected_total{reason=\"" + reason + "\"}") ==
          real(count));
  CHECK(s.round_latency.count > 0);
  CHECK(sample_value(text, "odbatch_round_latency_seconds_count") == real(s.round_latency.count));
  CHECK(sample_value(text, "odbatch_round_latency_seconds_bucket{le=\"+Inf\"}") ==
        real(s.round_latency.count));
  CHECK(sample_value(text, "odbatch_stage_items_total{stage=\"emitter\"}") ==
        real(s.emitter.items));
  // Drained: nothing in flight, nothing waiting for the trainer.
  CHECK(sample_value(text, "odbatch_queue_depth{queue=\"reader_in_flight\"}") == 0);
  CHECK(sample_value(text, "odbatch_queue_depth{queue=\"batch_queue\"}") == 0);
  const auto& config = pipeline.config();
  CHECK(sample_value(text, "odbatch_queue_capacity{queue=\"reader_in_flight\"}") ==
        real(config.flow.reader_capacity + effective_lookahead(config)));
  CHECK(sample_value(text, "odbatch_queue_capacity{queue=\"batch_queue\"}") ==
        real(config.flow.prefetch));

  CHECK(test::http_get(pipeline.metrics_port(), "/").status == 404);
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
