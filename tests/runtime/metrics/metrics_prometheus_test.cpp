// The Prometheus text of a known snapshot, line by line: HELP and TYPE of every family, counters
// ending in _total, labels escaped, numbers without exponents, a cumulative latency histogram;
// and Prometheus's own linter, promtool (taken from Debian's package by a CTest fixture), agrees.
#include <doctest/doctest.h>

#include <ctime>
#include <string>

#include "odbatch/metrics/metrics_prometheus.hpp"
#include "promtool_check.hpp"

using namespace odbatch;
using odbatch::test::promtool_check;

namespace {

StatsSnapshot known_snapshot() {
  StatsSnapshot s;
  s.records_read = 12;
  s.samples_emitted = 9;
  s.samples_rejected = 3;
  s.rejected_by_reason = {{"over_length", 2}, {"bad \"json\"\\", 1}};
  s.batches = 4;
  s.idle_batches = 1;
  s.tokens = 300;
  s.padded_tokens = 400;
  s.labels = 120;
  s.image_buffers_reused = 7;
  s.seconds_to_first_batch = 0.5;
  s.trainer_wait_seconds = 1.25;
  s.wall_seconds = 10.0;
  s.reader = {12, 0.25, 0.5};
  s.emitter = {4, 0.125, 2.0};
  s.reader_in_flight = {3, 320};
  s.batch_queue = {1, 4};
  s.round_latency.buckets[3] = 2;   // at most 1 ms
  s.round_latency.buckets[18] = 1;  // above 60 s
  s.round_latency.count = 3;
  s.round_latency.sum_seconds = 70.0015;
  s.round_latency.max_seconds = 70.0;
  return s;
}

// Rank 3 of 8, with reasons of which the snapshot counted one (over_length) and not the others.
PrometheusScope known_scope() {
  return PrometheusScope{3, 8, {"pixel_bomb", "over_length", "no_labels"}};
}

}  // namespace

TEST_CASE("promtool finds no problem in the text of a known snapshot or of an empty one") {
  const auto [known_status, known_report] =
      promtool_check(prometheus_text(known_snapshot(), known_scope()), "known");
  INFO(known_report);
  CHECK(known_status == 0);
  CHECK(known_report.empty());
  const auto [empty_status, empty_report] =
      promtool_check(prometheus_text(StatsSnapshot{}, PrometheusScope{}), "empty");
  INFO(empty_report);
  CHECK(empty_status == 0);
  CHECK(empty_report.empty());
}

TEST_CASE("the Prometheus text of a known snapshot") {
  const std::string expected =
      R"(# HELP odbatch_build_info Always 1; its labels name the odbatch version serving and the run's world size.
# TYPE odbatch_build_info gauge
odbatch_build_info{rank="3",version=")" ODBATCH_VERSION R"(",world_size="8"} 1
# HELP odbatch_records_read_total Records the reader has read; each becomes a sample or a rejection.
# TYPE odbatch_records_read_total counter
odbatch_records_read_total{rank="3"} 12
# HELP odbatch_samples_emitted_total Samples in the batches emitted.
# TYPE odbatch_samples_emitted_total counter
odbatch_samples_emitted_total{rank="3"} 9
# HELP odbatch_samples_rejected_total Samples rejected, by reason.
# TYPE odbatch_samples_rejected_total counter
odbatch_samples_rejected_total{rank="3",reason="bad \"json\"\\"} 1
odbatch_samples_rejected_total{rank="3",reason="no_labels"} 0
odbatch_samples_rejected_total{rank="3",reason="over_length"} 2
odbatch_samples_rejected_total{rank="3",reason="pixel_bomb"} 0
# HELP odbatch_batches_total Batches emitted, IDLE ones included.
# TYPE odbatch_batches_total counter
odbatch_batches_total{rank="3"} 4
# HELP odbatch_idle_batches_total IDLE batches emitted: steps where this rank had nothing to train on.
# TYPE odbatch_idle_batches_total counter
odbatch_idle_batches_total{rank="3"} 1
# HELP odbatch_tokens_total Real tokens in the batches emitted.
# TYPE odbatch_tokens_total counter
odbatch_tokens_total{rank="3"} 300
# HELP odbatch_padded_tokens_total Token slots of the batches emitted, padding included (packed: the real tokens).
# TYPE odbatch_padded_tokens_total counter
odbatch_padded_tokens_total{rank="3"} 400
# HELP odbatch_labels_total Supervised targets in the batches emitted.
# TYPE odbatch_labels_total counter
odbatch_labels_total{rank="3"} 120
# HELP odbatch_image_buffers_reused_total Images decoded into a pixel buffer that a released image gave back.
# TYPE odbatch_image_buffers_reused_total counter
odbatch_image_buffers_reused_total{rank="3"} 7
# HELP odbatch_padding_efficiency_ratio Real tokens over token slots so far, 0 to 1.
# TYPE odbatch_padding_efficiency_ratio gauge
odbatch_padding_efficiency_ratio{rank="3"} 0.75
# HELP odbatch_trainer_wait_seconds_total Time next_batch() has waited for a batch.
# TYPE odbatch_trainer_wait_seconds_total counter
odbatch_trainer_wait_seconds_total{rank="3"} 1.25
# HELP odbatch_first_batch_seconds The first epoch's time from start_epoch to its first batch.
# TYPE odbatch_first_batch_seconds gauge
odbatch_first_batch_seconds{rank="3"} 0.5
# HELP odbatch_running_seconds Wall time since the pipeline's first start_epoch.
# TYPE odbatch_running_seconds gauge
odbatch_running_seconds{rank="3"} 10
# HELP odbatch_stage_items_total Items each stage has processed.
# TYPE odbatch_stage_items_total counter
odbatch_stage_items_total{rank="3",stage="reader"} 12
odbatch_stage_items_total{rank="3",stage="tokenizer"} 0
odbatch_stage_items_total{rank="3",stage="image_decoder"} 0
odbatch_stage_items_total{rank="3",stage="joiner"} 0
odbatch_stage_items_total{rank="3",stage="packer"} 0
odbatch_stage_items_total{rank="3",stage="aligner"} 0
odbatch_stage_items_total{rank="3",stage="coordinator"} 0
odbatch_stage_items_total{rank="3",stage="emitter"} 4
# HELP odbatch_stage_cpu_seconds_total Thread CPU time each stage has spent on its items.
# TYPE odbatch_stage_cpu_seconds_total counter
odbatch_stage_cpu_seconds_total{rank="3",stage="reader"} 0.25
odbatch_stage_cpu_seconds_total{rank="3",stage="tokenizer"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="image_decoder"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="joiner"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="packer"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="aligner"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="coordinator"} 0
odbatch_stage_cpu_seconds_total{rank="3",stage="emitter"} 0.125
# HELP odbatch_stage_blocked_seconds_total Wall time each stage has waited on a full downstream.
# TYPE odbatch_stage_blocked_seconds_total counter
odbatch_stage_blocked_seconds_total{rank="3",stage="reader"} 0.5
odbatch_stage_blocked_seconds_total{rank="3",stage="tokenizer"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="image_decoder"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="joiner"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="packer"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="aligner"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="coordinator"} 0
odbatch_stage_blocked_seconds_total{rank="3",stage="emitter"} 2
# HELP odbatch_queue_depth Items in each bounded edge of the pipeline now.
# TYPE odbatch_queue_depth gauge
odbatch_queue_depth{rank="3",queue="reader_in_flight"} 3
odbatch_queue_depth{rank="3",queue="batch_queue"} 1
# HELP odbatch_queue_capacity The most items each bounded edge may hold.
# TYPE odbatch_queue_capacity gauge
odbatch_queue_capacity{rank="3",queue="reader_in_flight"} 320
odbatch_queue_capacity{rank="3",queue="batch_queue"} 4
# HELP odbatch_round_latency_seconds Completed rounds of the coordinator: readiness, proposal exchange and plan.
# TYPE odbatch_round_latency_seconds histogram
odbatch_round_latency_seconds_bucket{rank="3",le="0.0001"} 0
odbatch_round_latency_seconds_bucket{rank="3",le="0.00025"} 0
odbatch_round_latency_seconds_bucket{rank="3",le="0.0005"} 0
odbatch_round_latency_seconds_bucket{rank="3",le="0.001"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.0025"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.005"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.01"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.025"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.05"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.1"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.25"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="0.5"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="1"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="2.5"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="5"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="10"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="30"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="60"} 2
odbatch_round_latency_seconds_bucket{rank="3",le="+Inf"} 3
odbatch_round_latency_seconds_sum{rank="3"} 70.0015
odbatch_round_latency_seconds_count{rank="3"} 3
# HELP odbatch_round_latency_max_seconds The longest completed round.
# TYPE odbatch_round_latency_max_seconds gauge
odbatch_round_latency_max_seconds{rank="3"} 70
)";
  const std::string actual = prometheus_text(known_snapshot(), known_scope());
  // Line by line first, so that a failure names the first line that differs.
  std::size_t at = 0;
  std::size_t line = 1;
  while (at < expected.size() && at < actual.size()) {
    const auto expected_end = expected.find('\n', at);
    const auto actual_end = actual.find('\n', at);
    const auto expected_line = expected.substr(at, expected_end - at);
    INFO("line " << line);
    REQUIRE(actual.substr(at, actual_end - at) == expected_line);
    at = expected_end + 1;
    ++line;
  }
  CHECK(actual == expected);
}

TEST_CASE("a snapshot without rejections still declares the rejection counter") {
  const std::string text = prometheus_text(StatsSnapshot{}, PrometheusScope{});
  CHECK(text.find("# TYPE odbatch_samples_rejected_total counter\n# HELP odbatch_batches_total") !=
        std::string::npos);
  CHECK(text.find("odbatch_padding_efficiency_ratio{rank=\"0\"} 1\n") != std::string::npos);
  CHECK(text.find("odbatch_round_latency_seconds_bucket{rank=\"0\",le=\"+Inf\"} 0\n") !=
        std::string::npos);
}

TEST_CASE("every rejection reason of the scope is exported at 0 before its first rejection") {
  const std::string text = prometheus_text(StatsSnapshot{}, known_scope());
  CHECK(text.find("# TYPE odbatch_samples_rejected_total counter\n"
                  "odbatch_samples_rejected_total{rank=\"3\",reason=\"no_labels\"} 0\n"
                  "odbatch_samples_rejected_total{rank=\"3\",reason=\"over_length\"} 0\n"
                  "odbatch_samples_rejected_total{rank=\"3\",reason=\"pixel_bomb\"} 0\n#") !=
        std::string::npos);
}

TEST_CASE("the process's standard metrics read from /proc pass promtool and are plausible") {
  const std::string text = process_prometheus_text();
  const auto value = [&](const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
  };
  CHECK(value("process_cpu_seconds_total") >= 0);
  CHECK(value("process_resident_memory_bytes") > 1024 * 1024);
  CHECK(value("process_open_fds") >= 3);
  // Started after 2020 and not in the future.
  CHECK(value("process_start_time_seconds") > 1.5e9);
  CHECK(value("process_start_time_seconds") <= static_cast<double>(std::time(nullptr)) + 1);
  const auto [status, report] = promtool_check(text, "process");
  INFO(report);
  CHECK(status == 0);
  CHECK(report.empty());
}
