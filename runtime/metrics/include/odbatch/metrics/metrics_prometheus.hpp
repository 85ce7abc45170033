#pragma once
// A pipeline's counters in Prometheus's text exposition format 0.0.4: counters end in _total,
// levels are gauges, the round latency is a histogram (docs/metrics.md lists the metrics).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/metrics/pipeline_stats.hpp"

namespace odbatch {

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Who serves the text and what it can count. Every odbatch_ series carries a `rank` label, and
// odbatch_build_info a `world_size` one, so that the ranks' scrapes stay apart in one Prometheus.
// Each of `rejection_reasons` is exported from the first scrape on, at 0 until counted, so that
// rate() and increase() see a reason's first rejection.
struct PrometheusScope {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::vector<std::string> rejection_reasons;
};

std::string prometheus_text(const StatsSnapshot& stats, const PrometheusScope& scope);

// The process's standard metrics, read from /proc/self: process_cpu_seconds_total,
// process_resident_memory_bytes, process_start_time_seconds, process_open_fds. Throws
// std::runtime_error naming the /proc file it could not read.
std::string process_prometheus_text();

}  // namespace odbatch
