#include "odbatch/metrics/metrics_prometheus.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace odbatch {
namespace {

// The shortest decimal that reads back as the same double, never in exponent notation, so a
// scrape is byte-for-byte reproducible.
std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[400];
  const auto end = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed).ptr;
  return std::string(text, end);
}
std::string number(std::uint64_t value) {
  return std::to_string(value);
}

// Label values escape backslash, double quote and line feed.
std::string label_value(std::string_view value) {
  std::string escaped;
  for (const char c : value) {
    if (c == '\\')
      escaped += "\\\\";
    else if (c == '"')
      escaped += "\\\"";
    else if (c == '\n')
      escaped += "\\n";
    else
      escaped += c;
  }
  return escaped;
}

// The text of one scrape: every sample's labels begin with the scope's (the rank).
class Exposition {
 public:
  explicit Exposition(std::string scope_labels) : scope_labels_(std::move(scope_labels)) {}

  void family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += "# HELP odbatch_";
    text_ += name;
    text_ += ' ';
    text_ += help;
    text_ += "\n# TYPE odbatch_";
    text_ += name;
    text_ += ' ';
    text_ += type;
    text_ += '\n';
  }
  // A sample's own labels, names and values, after the scope's.
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  template <class Value>
  void sample(std::string_view name, Value value, Labels labels = {}) {
    text_ += "odbatch_";
    text_ += name;
    text_ += '{';
    text_ += scope_labels_;
    for (const auto& [label, text] : labels) {
      text_ += ',';
      text_ += label;
      text_ += "=\"";
      text_ += label_value(text);
      text_ += '"';
    }
    text_ += "} ";
    text_ += number(value);
    text_ += '\n';
  }
  template <class Value>
  void single(std::string_view name, std::string_view type, std::string_view help, Value value) {
    family(name, type, help);
    sample(name, value);
  }
  std::string take() { return std::move(text_); }

 private:
  std::string scope_labels_;
  std::string text_;
};

void rejections(Exposition& out, const StatsSnapshot& s, const PrometheusScope& scope) {
  out.family("samples_rejected_total", "counter", "Samples rejected, by reason.");
  std::map<std::string, std::uint64_t> counts;
  for (const auto& reason : scope.rejection_reasons) counts.emplace(reason, 0);
  for (const auto& [reason, count] : s.rejected_by_reason) counts[reason] = count;
  for (const auto& [reason, count] : counts)
    out.sample("samples_rejected_total", count, {{"reason", reason}});
}

void stages(Exposition& out, const StatsSnapshot& s) {
  out.family("stage_items_total", "counter", "Items each stage has processed.");
  for (const auto& [name, stage] : s.named_stages())
    out.sample("stage_items_total", stage->items, {{"stage", name}});
  out.family("stage_cpu_seconds_total", "counter",
             "Thread CPU time each stage has spent on its items.");
  for (const auto& [name, stage] : s.named_stages())
    out.sample("stage_cpu_seconds_total", stage->cpu_seconds, {{"stage", name}});
  out.family("stage_blocked_seconds_total", "counter",
             "Wall time each stage has waited on a full downstream.");
  for (const auto& [name, stage] : s.named_stages())
    out.sample("stage_blocked_seconds_total", stage->blocked_seconds, {{"stage", name}});
}

void queues(Exposition& out, const StatsSnapshot& s) {
  out.family("queue_depth", "gauge", "Items in each bounded edge of the pipeline now.");
  for (const auto& [name, queue] : s.named_queues())
    out.sample("queue_depth", queue->depth, {{"queue", name}});
  out.family("queue_capacity", "gauge", "The most items each bounded edge may hold.");
  for (const auto& [name, queue] : s.named_queues())
    out.sample("queue_capacity", queue->capacity, {{"queue", name}});
}

void round_latency(Exposition& out, const LatencySnapshot& latency) {
  out.family("round_latency_seconds", "histogram",
             "Completed rounds of the coordinator: readiness, proposal exchange and plan.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) {
    cumulative += latency.buckets[i];
    const double bound = i < kLatencyBucketBounds.size() ? kLatencyBucketBounds[i] : INFINITY;
    out.sample("round_latency_seconds_bucket", cumulative, {{"le", number(bound)}});
  }
  out.sample("round_latency_seconds_sum", latency.sum_seconds);
  out.sample("round_latency_seconds_count", latency.count);
  out.single("round_latency_max_seconds", "gauge", "The longest completed round.",
             latency.max_seconds);
}

// A /proc file whole; an error names it.
std::string read_proc(const char* path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(std::string("cannot read ") + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::string process_prometheus_text() {
  // /proc/self/stat: the fields after the command's closing parenthesis, from field 3 (state).
  const std::string stat = read_proc("/proc/self/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  const std::vector<std::string> field{std::istream_iterator<std::string>(fields), {}};
  if (field.size() < 22) throw std::runtime_error("/proc/self/stat: fewer fields than expected");
  const auto at = [&](std::size_t number) { return std::stod(field[number - 3]); };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // Boot time, in seconds since the Unix epoch: /proc/stat's btime line.
  const std::string proc_stat = read_proc("/proc/stat");
  const auto btime = proc_stat.find("\nbtime ");
  if (btime == std::string::npos) throw std::runtime_error("/proc/stat: no btime line");
  const double boot_seconds = std::stod(proc_stat.substr(btime + 7));
  std::uint64_t open_fds = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++open_fds;

  std::string text;
  const auto metric = [&](std::string_view name, std::string_view type, std::string_view help,
                          const std::string& value) {
    text.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
    text.append(name).append(" ").append(type).append("\n");
    text.append(name).append(" ").append(value).append("\n");
  };
  metric("process_cpu_seconds_total", "counter", "User and system CPU time the process has spent.",
         number((at(14) + at(15)) / ticks));
  metric("process_resident_memory_bytes", "gauge", "Resident memory of the process.",
         number(static_cast<std::uint64_t>(at(24) * page)));
  metric("process_start_time_seconds", "gauge",
         "Start time of the process since the Unix epoch, in seconds.",
         number(boot_seconds + at(22) / ticks));
  metric("process_open_fds", "gauge", "File descriptors the process holds open.", number(open_fds));
  return text;
}

std::string prometheus_text(const StatsSnapshot& s, const PrometheusScope& scope) {
  Exposition out("rank=\"" + std::to_string(scope.rank) + '"');
  out.family("build_info", "gauge",
             "Always 1; its labels name the odbatch version serving and the run's world size.");
  out.sample("build_info", std::uint64_t{1},
             {{"version", ODBATCH_VERSION}, {"world_size", std::to_string(scope.world_size)}});
  out.single("records_read_total", "counter",
             "Records the reader has read; each becomes a sample or a rejection.", s.records_read);
  out.single("samples_emitted_total", "counter", "Samples in the batches emitted.",
             s.samples_emitted);
  rejections(out, s, scope);
  out.single("batches_total", "counter", "Batches emitted, IDLE ones included.", s.batches);
  out.single("idle_batches_total", "counter",
             "IDLE batches emitted: steps where this rank had nothing to train on.",
             s.idle_batches);
  out.single("tokens_total", "counter", "Real tokens in the batches emitted.", s.tokens);
  out.single("padded_tokens_total", "counter",
             "Token slots of the batches emitted, padding included (packed: the real tokens).",
             s.padded_tokens);
  out.single("labels_total", "counter", "Supervised targets in the batches emitted.", s.labels);
  out.single("image_buffers_reused_total", "counter",
             "Images decoded into a pixel buffer that a released image gave back.",
             s.image_buffers_reused);
  out.single("padding_efficiency_ratio", "gauge", "Real tokens over token slots so far, 0 to 1.",
             s.padding_efficiency());
  out.single("trainer_wait_seconds_total", "counter", "Time next_batch() has waited for a batch.",
             s.trainer_wait_seconds);
  out.single("first_batch_seconds", "gauge",
             "The first epoch's time from start_epoch to its first batch.",
             s.seconds_to_first_batch);
  out.single("running_seconds", "gauge", "Wall time since the pipeline's first start_epoch.",
             s.wall_seconds);
  stages(out, s);
  queues(out, s);
  round_latency(out, s.round_latency);
  return out.take();
}

}  // namespace odbatch
