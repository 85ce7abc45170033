// The stats JSON: it parses, carries every counter of the snapshot, the rates over its wall
// time, the queues, the stages and the round latency with its estimates.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "odbatch/metrics/metrics_json.hpp"

using namespace odbatch;

TEST_CASE("the stats JSON parses and holds every field") {
  StatsSnapshot s;
  s.records_read = 12;
  s.samples_emitted = 9;
  s.samples_rejected = 3;
  s.rejected_by_reason = {{"over_length", 2}, {"bad_json", 1}};
  s.batches = 4;
  s.idle_batches = 1;
  s.tokens = 300;
  s.padded_tokens = 400;
  s.labels = 120;
  s.image_buffers_reused = 7;
  s.wall_seconds = 2.0;
  s.reader = {12, 0.25, 0.5};
  s.reader_in_flight = {3, 320};
  s.batch_queue = {1, 4};
  s.round_latency.buckets[3] = 4;  // (0.5 ms, 1 ms]
  s.round_latency.count = 4;
  s.round_latency.sum_seconds = 0.003;
  s.round_latency.max_seconds = 0.0009;

  const auto j = nlohmann::json::parse(stats_json(s));
  CHECK(j["wall_seconds"] == 2.0);
  CHECK(j["samples_per_second"] == 4.5);
  CHECK(j["tokens_per_second"] == 150.0);
  CHECK(j["padding_efficiency"] == 0.75);
  CHECK(j["records_read"] == 12);
  CHECK(j["samples_emitted"] == 9);
  CHECK(j["samples_rejected"] == 3);
  CHECK(j["rejected_by_reason"] == nlohmann::json{{"over_length", 2}, {"bad_json", 1}});
  CHECK(j["batches"] == 4);
  CHECK(j["idle_batches"] == 1);
  CHECK(j["tokens"] == 300);
  CHECK(j["padded_tokens"] == 400);
  CHECK(j["labels"] == 120);
  CHECK(j["image_buffers_reused"] == 7);
  CHECK(j.contains("seconds_to_first_batch"));
  CHECK(j.contains("trainer_wait_seconds"));
  CHECK(j["queues"]["reader_in_flight"] == nlohmann::json{{"depth", 3}, {"capacity", 320}});
  CHECK(j["queues"]["batch_queue"] == nlohmann::json{{"depth", 1}, {"capacity", 4}});
  CHECK(j["stages"].size() == 8);
  CHECK(j["stages"]["reader"] ==
        nlohmann::json{{"items", 12}, {"cpu_seconds", 0.25}, {"blocked_seconds", 0.5}});
  for (const auto* stage :
       {"tokenizer", "image_decoder", "joiner", "packer", "aligner", "coordinator", "emitter"})
    CHECK(j["stages"].contains(stage));
  const auto& latency = j["round_latency"];
  CHECK(latency["count"] == 4);
  CHECK(latency["mean_seconds"].get<double>() == doctest::Approx(0.00075));
  // Half of the bucket (0.5 ms, 1 ms] lies below the median; the estimate never tops the max.
  CHECK(latency["p50_seconds"].get<double>() == doctest::Approx(0.00075));
  CHECK(latency["p99_seconds"].get<double>() == doctest::Approx(0.0009));
  CHECK(latency["max_seconds"] == 0.0009);
  CHECK(latency["sum_seconds"] == 0.003);
  CHECK(latency["bucket_bounds_seconds"].size() == kLatencyBucketBounds.size());
  CHECK(latency["bucket_counts"].size() == kLatencyBuckets);
  CHECK(latency["bucket_counts"][3] == 4);
}

TEST_CASE("before the first epoch the rates are zero, not a division by zero") {
  const auto j = nlohmann::json::parse(stats_json(StatsSnapshot{}));
  CHECK(j["wall_seconds"] == 0.0);
  CHECK(j["samples_per_second"] == 0.0);
  CHECK(j["tokens_per_second"] == 0.0);
  CHECK(j["padding_efficiency"] == 1.0);
  CHECK(j["round_latency"]["p99_seconds"] == 0.0);
}
