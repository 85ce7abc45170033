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

}  // namespace odbatch
