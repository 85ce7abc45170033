#pragma once
// `odbatch graph CONFIG`: draws the actor graph a pipeline file builds (the description the
// pipeline spawns its actors from, odbatch/config/pipeline_graph.hpp): every actor and pool, the
// user's stages, and the bounded edges with their capacities; as text, JSON, Graphviz DOT or SVG.
// With a running pipeline's metrics endpoint it adds each stage's rate and blocked share,
// measured between two scrapes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace odbatch::cli {

enum class GraphFormat : std::uint8_t { text, json, dot, svg };

struct GraphOptions {
  std::filesystem::path config;
  GraphFormat format = GraphFormat::text;
  std::optional<std::filesystem::path> output;  // stdout when unset
  std::optional<std::string> metrics_url;       // e.g. http://127.0.0.1:9400/metrics
  std::uint32_t interval_ms = 1000;             // between the two scrapes
};

// Returns the exit status: 0 drawn, 2 the config, the endpoint or the output cannot be used.
int run_graph_command(const GraphOptions& options);

}  // namespace odbatch::cli
