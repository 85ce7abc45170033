#pragma once
// A pipeline's counters in Prometheus's text exposition format 0.0.4: counters end in _total,
// levels are gauges, the round latency is a histogram (docs/metrics.md lists the metrics).
#include <string>
#include <string_view>

#include "odbatch/metrics/pipeline_stats.hpp"

namespace odbatch {

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string prometheus_text(const StatsSnapshot& stats);

// The process's standard metrics, read from /proc/self: process_cpu_seconds_total,
// process_resident_memory_bytes, process_start_time_seconds, process_open_fds. Throws
// std::runtime_error naming the /proc file it could not read.
std::string process_prometheus_text();

}  // namespace odbatch
