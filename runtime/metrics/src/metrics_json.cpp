#include "odbatch/metrics/metrics_json.hpp"

#include <nlohmann/json.hpp>

namespace odbatch {
namespace {

// Insertion-ordered, so the fields read in the order docs/metrics.md explains them.
using Json = nlohmann::ordered_json;

Json latency_json(const LatencySnapshot& latency) {
  Json counts = Json::array();
  for (const auto count : latency.buckets) counts.push_back(count);
  return {{"count", latency.count},
          {"mean_seconds", latency.mean_seconds()},
          {"p50_seconds", latency.quantile(0.5)},
          {"p99_seconds", latency.quantile(0.99)},
          {"max_seconds", latency.max_seconds},
          {"sum_seconds", latency.sum_seconds},
          {"bucket_bounds_seconds", kLatencyBucketBounds},
          {"bucket_counts", counts}};
}

}  // namespace

std::string stats_json(const StatsSnapshot& s) {
  Json rejected = Json::object();
  for (const auto& [reason, count] : s.rejected_by_reason) rejected[reason] = count;
  Json queues = Json::object();
  for (const auto& [name, queue] : s.named_queues())
    queues[std::string(name)] = {{"depth", queue->depth}, {"capacity", queue->capacity}};
  Json stages = Json::object();
  for (const auto& [name, stage] : s.named_stages())
    stages[std::string(name)] = {{"items", stage->items},
                                 {"cpu_seconds", stage->cpu_seconds},
                                 {"blocked_seconds", stage->blocked_seconds}};
  const Json document = {{"wall_seconds", s.wall_seconds},
                         {"samples_per_second", s.samples_per_second()},
                         {"tokens_per_second", s.tokens_per_second()},
                         {"padding_efficiency", s.padding_efficiency()},
                         {"records_read", s.records_read},
                         {"samples_emitted", s.samples_emitted},
                         {"samples_rejected", s.samples_rejected},
                         {"rejected_by_reason", rejected},
                         {"batches", s.batches},
                         {"idle_batches", s.idle_batches},
                         {"tokens", s.tokens},
                         {"padded_tokens", s.padded_tokens},
                         {"labels", s.labels},
                         {"image_buffers_reused", s.image_buffers_reused},
                         {"seconds_to_first_batch", s.seconds_to_first_batch},
                         {"trainer_wait_seconds", s.trainer_wait_seconds},
                         {"queues", queues},
                         {"stages", stages},
                         {"round_latency", latency_json(s.round_latency)}};
  return document.dump(2);
}

}  // namespace odbatch
