#include "graph_command.hpp"

#include <curl/curl.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "json_output.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_graph.hpp"

namespace odbatch::cli {
namespace {

constexpr int kInputErrorStatus = 2;

// A stage's work as two scrapes of the metrics endpoint show it.
struct StageActivity {
  double items_per_second = 0.0;
  double blocked_share = 0.0;  // of the wall time between the scrapes, summed over ranks
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// The endpoint's text; throws std::runtime_error naming the URL and the failure.
std::string fetch(const std::string& url) {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw std::runtime_error("cannot start an HTTP client");
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, 10'000L);
  curl_easy_setopt(curl.get(), CURLOPT_MAXFILESIZE, 16L << 20);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  if (const auto code = curl_easy_perform(curl.get()); code != CURLE_OK)
    throw std::runtime_error(url + ": " + curl_easy_strerror(code));
  return body;
}

// Sums `family`{...,stage="name",...} over ranks, by stage.
std::map<std::string, double> per_stage(const std::string& text, const std::string& family) {
  std::map<std::string, double> values;
  std::istringstream lines(text);
  std::string line;
  const std::string prefix = family + "{";
  while (std::getline(lines, line)) {
    if (!line.starts_with(prefix)) continue;
    const auto label = line.find("stage=\"");
    const auto close = line.find('}');
    if (label == std::string::npos || close == std::string::npos) continue;
    const auto name_end = line.find('"', label + 7);
    if (name_end == std::string::npos) continue;
    values[line.substr(label + 7, name_end - label - 7)] +=
        std::strtod(line.c_str() + close + 1, nullptr);
  }
  return values;
}

std::map<std::string, StageActivity> measure(const std::string& url, std::uint32_t interval_ms) {
  const auto first = fetch(url);
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  const auto second = fetch(url);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::map<std::string, StageActivity> activity;
  const auto items_before = per_stage(first, "odbatch_stage_items_total");
  const auto blocked_before = per_stage(first, "odbatch_stage_blocked_seconds_total");
  for (const auto& [stage, items] : per_stage(second, "odbatch_stage_items_total")) {
    const auto before = items_before.find(stage);
    activity[stage].items_per_second =
        (items - (before == items_before.end() ? 0.0 : before->second)) / seconds;
  }
  for (const auto& [stage, blocked] : per_stage(second, "odbatch_stage_blocked_seconds_total")) {
    const auto before = blocked_before.find(stage);
    activity[stage].blocked_share =
        (blocked - (before == blocked_before.end() ? 0.0 : before->second)) / seconds;
  }
  if (activity.empty())
    throw std::runtime_error(url +
                             ": no odbatch_stage_items_total samples (is it odbatch's "
                             "metrics endpoint?)");
  return activity;
}

std::string capacity_text(const GraphEdge& edge) {
  return edge.capacity == 0 ? "" : " <= " + std::to_string(edge.capacity);
}

std::string activity_text(const std::map<std::string, StageActivity>& activity,
                          const std::string& stage) {
  const auto it = activity.find(stage);
  if (it == activity.end()) return "";
  char text[96];
  std::snprintf(text, sizeof text, "%.0f items/s, blocked %.0f%%", it->second.items_per_second,
                100.0 * it->second.blocked_share);
  return text;
}

std::string text_of(const PipelineGraph& graph, const std::string& config,
                    const std::map<std::string, StageActivity>& activity) {
  std::uint32_t actors = 0;
  for (const auto& node : graph.nodes) actors += node.actors;
  std::ostringstream out;
  out << "odbatch graph: " << config << ": " << graph.nodes.size() << " nodes, " << actors
      << " actors\n";
  char line[512];
  for (const auto& node : graph.nodes) {
    std::snprintf(line, sizeof line, "  %-16s %-14s %3u actor%s  %s", node.name.c_str(),
                  std::string(to_string(node.role)).c_str(), node.actors,
                  node.actors == 1 ? " " : "s", node.detail.c_str());
    out << line;
    if (const auto rate = activity_text(activity, node.name); !rate.empty())
      out << "  [" << rate << "]";
    out << '\n';
  }
  out << "edges:\n";
  for (const auto& edge : graph.edges) {
    std::snprintf(line, sizeof line, "  %-16s -> %-16s %-24s%s (%s)", edge.from.c_str(),
                  edge.to.c_str(), edge.carries.c_str(), capacity_text(edge).c_str(),
                  edge.bound.c_str());
    out << line << '\n';
  }
  return out.str();
}

std::string json_of(const PipelineGraph& graph, const std::string& config,
                    const std::map<std::string, StageActivity>& activity) {
  Report nodes = Report::array();
  for (const auto& node : graph.nodes) {
    Report entry{{"name", node.name},
                 {"role", std::string(to_string(node.role))},
                 {"actors", node.actors},
                 {"detail", node.detail}};
    if (const auto it = activity.find(node.name); it != activity.end()) {
      entry["items_per_second"] = it->second.items_per_second;
      entry["blocked_share"] = it->second.blocked_share;
    }
    nodes.push_back(std::move(entry));
  }
  Report edges = Report::array();
  for (const auto& edge : graph.edges)
    edges.push_back({{"from", edge.from},
                     {"to", edge.to},
                     {"carries", edge.carries},
                     {"capacity", edge.capacity},
                     {"bound", edge.bound},
                     {"credit", edge.credit}});
  Report report = command_report("graph");
  report.update(Report{{"config", config}, {"nodes", nodes}, {"edges", edges}});
  return to_readable_json(report) + "\n";
}

std::string dot_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string dot_of(const PipelineGraph& graph,
                   const std::map<std::string, StageActivity>& activity) {
  std::ostringstream out;
  out << "digraph odbatch {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", "
         "fillcolor=\"#eef3fb\", fontname=\"Helvetica\", fontsize=11];\n  edge [fontname="
         "\"Helvetica\", fontsize=9];\n";
  for (const auto& node : graph.nodes) {
    const bool user = node.role == GraphRole::record_stage || node.role == GraphRole::sample_stage;
    // Lines of the label, each escaped, joined by DOT's line break.
    std::string label = dot_escaped(node.name) + "\\n" + std::to_string(node.actors) + " actor" +
                        (node.actors == 1 ? "" : "s");
    if (const auto rate = activity_text(activity, node.name); !rate.empty())
      label += "\\n" + dot_escaped(rate);
    out << "  \"" << dot_escaped(node.name) << "\" [label=\"" << label << "\", tooltip=\""
        << dot_escaped(node.detail) << "\"" << (user ? ", fillcolor=\"#fdf1d6\"" : "")
        << (node.role == GraphRole::trainer ? ", shape=ellipse" : "") << "];\n";
  }
  for (const auto& edge : graph.edges)
    out << "  \"" << dot_escaped(edge.from) << "\" -> \"" << dot_escaped(edge.to) << "\" [label=\""
        << dot_escaped(edge.carries + capacity_text(edge)) << "\", tooltip=\""
        << dot_escaped(edge.bound) << "\""
        << (edge.credit ? ", style=dashed, constraint=false" : "") << "];\n";
  out << "}\n";
  return out.str();
}

// Graphviz's dot layout of the DOT text, rendered as SVG.
std::string svg_of(const std::string& dot) {
  std::unique_ptr<GVC_t, int (*)(GVC_t*)> context(gvContext(), gvFreeContext);
  Agraph_t* graph = agmemread(dot.c_str());
  if (!graph) throw std::runtime_error("Graphviz cannot read the graph");
  std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> owned(graph, agclose);
  if (gvLayout(context.get(), graph, "dot") != 0)
    throw std::runtime_error("Graphviz's dot layout failed");
  char* data = nullptr;
  unsigned int length = 0;
  const int rendered = gvRenderData(context.get(), graph, "svg", &data, &length);
  std::string svg = rendered == 0 && data ? std::string(data, length) : std::string();
  gvFreeRenderData(data);
  gvFreeLayout(context.get(), graph);
  if (svg.empty()) throw std::runtime_error("Graphviz cannot render SVG");
  return svg;
}

}  // namespace

int run_graph_command(const GraphOptions& options) {
  PipelineGraph graph;
  try {
    graph = pipeline_graph(PipelineConfig::from_toml_file(options.config));
  } catch (const ConfigFileError& e) {
    std::cerr << "odbatch graph: " << e.what() << '\n';
    return kInputErrorStatus;
  }
  std::map<std::string, StageActivity> activity;
  std::string drawn;
  try {
    if (options.metrics_url) activity = measure(*options.metrics_url, options.interval_ms);
    switch (options.format) {
      case GraphFormat::text:
        drawn = text_of(graph, options.config.string(), activity);
        break;
      case GraphFormat::json:
        drawn = json_of(graph, options.config.string(), activity);
        break;
      case GraphFormat::dot:
        drawn = dot_of(graph, activity);
        break;
      case GraphFormat::svg:
        drawn = svg_of(dot_of(graph, activity));
        break;
    }
  } catch (const std::runtime_error& e) {
    std::cerr << "odbatch graph: " << e.what() << '\n';
    return kInputErrorStatus;
  }
  if (!options.output) {
    std::cout << drawn;
    return 0;
  }
  std::ofstream out(*options.output, std::ios::binary);
  out << drawn;
  if (!out.flush()) {
    std::cerr << "odbatch graph: cannot write " << options.output->string() << '\n';
    return kInputErrorStatus;
  }
  return 0;
}

}  // namespace odbatch::cli
