#include "simulate_command.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string_view>

#include "gnuplot_plot.hpp"
#include "json_input.hpp"
#include "json_output.hpp"
#include "length_trace.hpp"
#include "odbatch/sim/length_statistics.hpp"
#include "odbatch/sim/step_cost_model.hpp"
#include "odbatch/sim/synthetic_workload.hpp"
#include "odbatch/sim/throughput_simulation.hpp"

namespace odbatch::cli {
namespace {

struct Workload {
  std::string name;
  std::string source;  // the trace's path or the distribution spec
  std::vector<SampleCost> samples;
};

double number(std::string_view text, std::string_view what) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty())
    throw InputError(std::string(what) + ": \"" + std::string(text) + "\" is not a number");
  return value;
}

// "key=value,key=value" into a map, every key among `allowed`.
std::map<std::string, double> parameters(std::string_view text, std::string_view spec,
                                         std::initializer_list<std::string_view> allowed) {
  std::map<std::string, double> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    const auto equals = item.find('=');
    const auto key = item.substr(0, equals);
    if (equals == std::string_view::npos ||
        std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string names;
      for (auto a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      throw InputError("--dist " + std::string(spec) + ": \"" + std::string(item) +
                       "\" is not one of " + names + " as key=value");
    }
    out[std::string(key)] = number(item.substr(equals + 1), "--dist " + std::string(key));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return out;
}

LognormalLengths lognormal(const std::map<std::string, double>& p, const std::string& prefix,
                           LognormalLengths d, std::string_view spec) {
  if (auto it = p.find(prefix + "mean"); it != p.end()) d.mean = it->second;
  if (auto it = p.find(prefix + "cv"); it != p.end()) d.cv = it->second;
  if (!(d.mean >= 1) || !(d.cv >= 0))
    throw InputError("--dist " + std::string(spec) +
                     ": a mean needs to be at least 1 and a cv at "
                     "least 0");
  return d;
}

LengthDistribution parse_distribution(std::string_view spec) {
  const auto colon = spec.find(':');
  const auto kind = spec.substr(0, colon);
  const auto rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  if (kind == "lognormal")
    return lognormal(parameters(rest, spec, {"mean", "cv"}), "", LognormalLengths{}, spec);
  if (kind == "bimodal") {
    const auto p =
        parameters(rest, spec, {"short_mean", "short_cv", "long_mean", "long_cv", "short_weight"});
    BimodalLengths d;
    d.short_mode = lognormal(p, "short_", d.short_mode, spec);
    d.long_mode = lognormal(p, "long_", d.long_mode, spec);
    if (auto it = p.find("short_weight"); it != p.end()) d.short_weight = it->second;
    if (!(d.short_weight >= 0 && d.short_weight <= 1))
      throw InputError("--dist " + std::string(spec) + ": short_weight must be between 0 and 1");
    return d;
  }
  throw InputError("--dist " + std::string(spec) +
                   ": expected lognormal:mean=M,cv=C or bimodal:short_mean=M,short_cv=C,"
                   "long_mean=M,long_cv=C,short_weight=W");
}

CalibrationPoint calibration_point(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw InputError("--calibrate: \"" + std::string(text) + "\" is not SAMPLES:SECONDS");
  const CalibrationPoint p{number(text.substr(0, colon), "--calibrate samples per step"),
                           number(text.substr(colon + 1), "--calibrate step seconds")};
  if (!(p.samples_per_step > 0) || !(p.step_seconds > 0))
    throw InputError("--calibrate: samples per step and seconds must be positive");
  return p;
}

Workload load_workload(const SimulateOptions& o) {
  Workload w;
  if (o.trace) {
    w.source = o.trace->string();
    w.name = o.name.empty() ? o.trace->stem().string() : o.name;
    w.samples = read_length_trace(*o.trace);
  } else {
    w.source = *o.distribution;
    w.name = o.name.empty() ? *o.distribution : o.name;
    if (o.samples == 0) throw InputError("--samples must be at least 1");
    w.samples =
        synthetic_samples(parse_distribution(*o.distribution), o.samples, o.seed, o.max_seq_len);
  }
  return w;
}

ThroughputSetup setup_of(const SimulateOptions& o, std::span<const SampleCost> samples) {
  if (o.nodes == 0 || o.ranks == 0 || o.ranks % o.nodes != 0)
    throw InputError("--ranks (" + std::to_string(o.ranks) +
                     ") must be a positive multiple of "
                     "--nodes (" +
                     std::to_string(o.nodes) + ")");
  ThroughputSetup s;
  s.batching.token_budget = o.token_budget;
  s.batching.budget_mode = o.budget_mode;
  s.batching.window = o.window;
  s.batching.max_seq_len = o.max_seq_len;
  s.batching.seed = o.seed;
  s.balanced_warmup = o.warmup;
  s.reference_warmup = o.reference_warmup;
  s.cluster = {o.nodes, o.ranks / o.nodes};
  const auto preset = cost_model_preset(o.model);
  if (!preset) throw InputError("--model: unknown preset " + o.model);
  s.cost_model = *preset;
  if (o.calibration) {
    const auto comma = o.calibration->find(',');
    if (comma == std::string::npos)
      throw InputError("--calibrate: expected two points N1:T1,N2:T2");
    try {
      s.cost_model =
          calibrate(s.cost_model, calibration_point(o.calibration->substr(0, comma)),
                    calibration_point(o.calibration->substr(comma + 1)), samples, s.cluster);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--calibrate: ") + e.what());
    }
  }
  s.standard_batch_sizes = o.batch_sizes;
  s.bmt_buckets_per_octave = o.buckets_per_octave;
  s.seed = o.seed;
  try {
    validate(s.batching);
  } catch (const ConfigError& e) {
    throw InputError(std::string("batching config: ") + e.what());
  }
  return s;
}

double ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

Report result_report(const SchedulerResult& r, const ThroughputComparison& c) {
  const auto& m = r.metrics;
  Report out;
  out["scheduler"] = r.name;
  out["kind"] = to_string(r.kind);
  if (r.kind == SchedulerKind::standard) out["batch_size"] = r.batch_size;
  out["steps"] = m.steps;
  out["steps_over_lb"] = ratio(m.steps, c.lb_steps);
  out["steps_over_gmt"] = ratio(m.steps, c.gmt_steps);
  out["seconds"] = m.seconds;
  out["compute_seconds"] = m.compute_seconds;
  out["communication_seconds"] = m.communication_seconds;
  out["optimizer_seconds"] = m.optimizer_seconds;
  out["samples_per_second"] = m.samples_per_second;
  out["speedup_over_standard"] = r.speedup;
  out["tokens_per_second"] = m.tokens_per_second;
  out["padding_efficiency"] = m.padding_efficiency;
  out["idle_fraction"] = m.idle_fraction;
  out["alignment_inflation"] = r.alignment_inflation;
  out["rank_imbalance"] = m.rank_imbalance;
  out["mean_fill"] = m.mean_fill;
  out["fill_histogram"] = m.fill_histogram;
  out["groups"] = m.groups;
  out["samples_emitted"] = r.accounting.emitted;
  out["samples_lost"] = r.accounting.lost();
  out["samples_duplicated"] = r.accounting.duplicated;
  out["steps_equal_across_ranks"] = r.accounting.steps_equal;
  if (r.kind == SchedulerKind::odb_reference || r.kind == SchedulerKind::odb_balanced) {
    out["rounds"] = r.rounds;
    out["deferral_histogram"] = r.deferral_histogram;
    out["audit_problems"] = r.audit_problems;
    out["failure"] = r.failure;
  }
  return out;
}

Report statistics_report(const LengthStatistics& s) {
  Report out{{"count", s.count}, {"mean", s.mean}, {"cv", s.cv}, {"min", s.min}};
  for (const auto& p : s.percentiles) out["p" + std::to_string(p.percent)] = p.value;
  out["max"] = s.max;
  return out;
}

Report cost_model_report(const StepCostModel& m, const ClusterShape& cluster,
                         const SimulateOptions& o) {
  Report out{{"name", m.name},
             {"fixed_seconds", m.fixed_seconds},
             {"seconds_per_token", m.seconds_per_token},
             {"seconds_per_attention", m.seconds_per_attention},
             {"seconds_per_patch", m.seconds_per_patch},
             {"gradient_bytes", m.gradient_bytes},
             {"allreduce_seconds", allreduce_seconds(m, cluster)},
             {"optimizer_seconds", optimizer_seconds(m, cluster)}};
  if (o.calibration) out["calibrated_from"] = *o.calibration;
  return out;
}

bool schedule_ok(const SchedulerResult& r) {
  return r.accounting.ok() && r.audit_problems == 0 && r.failure.empty();
}

// The headline: ODB balanced's samples per second over the best fixed batch size's and over the
// offline packing baselines', which users who already pack compare with.
void print_headline(const ThroughputComparison& c) {
  const SchedulerResult* balanced = nullptr;
  const SchedulerResult* best_standard = nullptr;
  std::vector<const SchedulerResult*> packing;
  for (const auto& r : c.results) {
    if (r.kind == SchedulerKind::odb_balanced) balanced = &r;
    if (r.kind == SchedulerKind::standard &&
        (!best_standard ||
         r.metrics.samples_per_second > best_standard->metrics.samples_per_second))
      best_standard = &r;
    if (r.kind == SchedulerKind::gmt || r.kind == SchedulerKind::bmt) packing.push_back(&r);
  }
  if (!balanced || balanced->metrics.samples_per_second <= 0) return;
  const auto over = [&](const SchedulerResult& other) {
    return other.metrics.samples_per_second > 0
               ? balanced->metrics.samples_per_second / other.metrics.samples_per_second
               : 0.0;
  };
  std::printf("\nODB balanced: ");
  if (best_standard)
    std::printf("%.2fx the best fixed batch size (%s)", over(*best_standard),
                best_standard->name.c_str());
  for (const auto* r : packing)
    std::printf("%s%.2fx %s (offline %s packing, lengths known in advance)",
                best_standard || r != packing.front() ? ", " : "", over(*r), r->name.c_str(),
                r->kind == SchedulerKind::gmt ? "sorted token-budget" : "bucketed token-budget");
  std::printf("\n");
}

void print_table(const Report& report, const ThroughputComparison& c) {
  const auto& w = report["workload"];
  const auto& s = report["setting"];
  const auto& m = report["cost_model"];
  std::printf("SIMULATED (step cost model, no GPU): %s\n", w["name"].get<std::string>().c_str());
  std::printf("workload: %llu samples, tokens mean %.1f, CV %.3f, p50 %u, p99 %u, max %u\n",
              w["samples"].get<unsigned long long>(), w["tokens"]["mean"].get<double>(),
              w["tokens"]["cv"].get<double>(), w["tokens"]["p50"].get<unsigned>(),
              w["tokens"]["p99"].get<unsigned>(), w["tokens"]["max"].get<unsigned>());
  std::printf("setting: %u node(s) x %u ranks, token budget %u (%s), window %u\n",
              s["nodes"].get<unsigned>(), s["ranks_per_node"].get<unsigned>(),
              s["token_budget"].get<unsigned>(), s["budget_mode"].get<std::string>().c_str(),
              s["window"].get<unsigned>());
  std::printf(
      "cost model %s: t0 %.3f s, a %.3g s/token, b %.3g s/token^2, c %.3g s/patch; all-reduce "
      "%.4f s, optimizer %.4f s per step\n",
      m["name"].get<std::string>().c_str(), m["fixed_seconds"].get<double>(),
      m["seconds_per_token"].get<double>(), m["seconds_per_attention"].get<double>(),
      m["seconds_per_patch"].get<double>(), m["allreduce_seconds"].get<double>(),
      m["optimizer_seconds"].get<double>());
  std::printf("oracles: LB %llu steps, GMT %llu steps\n\n",
              static_cast<unsigned long long>(c.lb_steps),
              static_cast<unsigned long long>(c.gmt_steps));
  std::printf("%-15s %8s %7s %7s %10s %7s %10s %7s %6s %6s %6s %6s %5s\n", "scheduler", "steps",
              "/LB", "/GMT", "samples/s", "x Std", "tokens/s", "pad eff", "IDLE", "align", "imbal",
              "fill", "lost");
  for (const auto& r : report["results"])
    std::printf(
        "%-15s %8llu %7.3f %7.3f %10.2f %7.3f %10.0f %7.4f %6.3f %6.3f %6.3f %6.3f %5llu%s\n",
        r["scheduler"].get<std::string>().c_str(), r["steps"].get<unsigned long long>(),
        r["steps_over_lb"].get<double>(), r["steps_over_gmt"].get<double>(),
        r["samples_per_second"].get<double>(), r["speedup_over_standard"].get<double>(),
        r["tokens_per_second"].get<double>(), r["padding_efficiency"].get<double>(),
        r["idle_fraction"].get<double>(), r["alignment_inflation"].get<double>(),
        r["rank_imbalance"].get<double>(), r["mean_fill"].get<double>(),
        r["samples_lost"].get<unsigned long long>(),
        r["steps_equal_across_ranks"].get<bool>() ? "" : "  STEPS DIFFER");
  for (const auto& r : c.results) {
    if (r.deferral_histogram.empty() && r.failure.empty()) continue;
    std::printf("%s: %llu rounds; samples by deferrals:", r.name.c_str(),
                static_cast<unsigned long long>(r.rounds));
    for (std::size_t d = 0; d < r.deferral_histogram.size(); ++d)
      std::printf(" %zu:%llu", d, static_cast<unsigned long long>(r.deferral_histogram[d]));
    if (!r.failure.empty()) std::printf("  FAILED: %s", r.failure.c_str());
    std::printf("\n");
  }
  print_headline(c);
}

// One line per schedule: "name" speedup padding_efficiency, names double-quoted for gnuplot.
std::string schedule_data(const Report& results) {
  std::string data;
  for (const auto& r : results) {
    std::string name = r["scheduler"].get<std::string>();
    std::replace(name.begin(), name.end(), '"', '\'');
    char numbers[64];
    std::snprintf(numbers, sizeof numbers, " %.6g %.6g\n", r["speedup_over_standard"].get<double>(),
                  r["padding_efficiency"].get<double>());
    data += "\"" + name + "\"" + numbers;
  }
  return data;
}

// Two panels over the same schedules: samples per second relative to Standard's (what a
// schedule buys) above, padding efficiency (why) below.
void plot_schedules(const std::filesystem::path& output, const Report& report) {
  const auto& s = report["setting"];
  // Speedups are over the first Standard schedule's samples per second.
  std::string baseline = "Standard";
  for (const auto& r : report["results"])
    if (r.contains("batch_size")) {
      baseline = r["scheduler"].get<std::string>();
      break;
    }
  const std::string title = "SIMULATED: " + report["workload"]["name"].get<std::string>() + ", " +
                            std::to_string(s["world"].get<unsigned>()) + " ranks, token budget " +
                            std::to_string(s["token_budget"].get<unsigned>()) + " (" +
                            s["budget_mode"].get<std::string>() + "), window " +
                            std::to_string(s["window"].get<unsigned>());
  const std::string script = "set multiplot layout 2,1 title " + gnuplot_quoted(title) +
                             " noenhanced\n"
                             "set style fill solid 0.7 border lc rgb '#1f4e79'\n"
                             "set boxwidth 0.6\n"
                             "set key off\n"
                             "set grid ytics\n"
                             "set xtics noenhanced font ',9'\n"
                             "set offsets 0, 0, graph 0.15, 0\n"
                             "set xrange [-0.6:*]\n"
                             "set yrange [0:*]\n"
                             "set ylabel " +
                             gnuplot_quoted("samples/s over " + baseline) +
                             " noenhanced\n"
                             "plot data using 0:2:xtic(1) with boxes lc rgb '#4f81bd', "
                             "'' using 0:2:(sprintf('%.2f', $2)) with labels offset 0,0.7\n"
                             "set yrange [0:1.15]\n"
                             "set ylabel 'padding efficiency'\n"
                             "plot data using 0:3:xtic(1) with boxes lc rgb '#9bbb59', "
                             "'' using 0:3:(sprintf('%.3f', $3)) with labels offset 0,0.7\n"
                             "unset multiplot\n";
  draw_with_gnuplot(output, script, schedule_data(report["results"]));
}

}  // namespace

int run_simulate_command(const SimulateOptions& options) {
  Workload workload;
  ThroughputSetup setup;
  try {
    if (options.plot) gnuplot_terminal(*options.plot);
    workload = load_workload(options);
    setup = setup_of(options, workload.samples);
  } catch (const InputError& e) {
    std::cerr << "odbatch simulate: " << e.what() << '\n';
    return 2;
  }
  const ThroughputComparison comparison = compare_throughput(workload.samples, setup);

  std::vector<std::uint32_t> tokens, patches;
  for (const auto& s : workload.samples) {
    tokens.push_back(s.tokens);
    patches.push_back(s.patches);
  }
  Report report = command_report("simulate");
  report["simulated"] = true;
  report["workload"] = {{"name", workload.name},
                        {"source", workload.source},
                        {"samples", workload.samples.size()},
                        {"tokens", statistics_report(summarize_lengths(tokens, 1))},
                        {"patches", statistics_report(summarize_lengths(patches, 1))}};
  report["setting"] = {{"nodes", setup.cluster.nodes},
                       {"ranks_per_node", setup.cluster.ranks_per_node},
                       {"world", setup.cluster.world()},
                       {"token_budget", comparison.batching.token_budget},
                       {"budget_mode", to_string(comparison.batching.budget_mode)},
                       {"window", comparison.batching.window},
                       {"max_defer_rounds", comparison.batching.max_defer_rounds},
                       {"balanced_warmup", to_string(setup.balanced_warmup)},
                       {"reference_warmup", to_string(setup.reference_warmup)},
                       {"standard_batch_sizes", setup.standard_batch_sizes},
                       {"bmt_buckets_per_octave", setup.bmt_buckets_per_octave},
                       {"seed", setup.seed}};
  report["cost_model"] = cost_model_report(setup.cost_model, setup.cluster, options);
  report["oracles"] = {{"lb_steps", comparison.lb_steps}, {"gmt_steps", comparison.gmt_steps}};
  Report results = Report::array();
  bool all_ok = true;
  for (const auto& r : comparison.results) {
    results.push_back(result_report(r, comparison));
    all_ok = all_ok && schedule_ok(r);
  }
  report["results"] = std::move(results);
  report["accounting_ok"] = all_ok;

  if (options.json) {
    std::ofstream out(*options.json);
    out << to_readable_json(report) << '\n';
    if (!out) {
      std::cerr << "odbatch simulate: cannot write " << options.json->string() << '\n';
      return 2;
    }
  }
  print_table(report, comparison);
  if (options.plot) {
    try {
      plot_schedules(*options.plot, report);
    } catch (const std::exception& e) {
      std::cerr << "odbatch simulate: --plot " << options.plot->string() << ": " << e.what()
                << '\n';
      return 1;
    }
    std::printf("plot: %s\n", options.plot->string().c_str());
  }
  if (!all_ok) {
    std::printf(
        "ACCOUNTING FAILED: a schedule lost or repeated samples, or its ranks differ in "
        "steps\n");
    return 1;
  }
  return 0;
}

}  // namespace odbatch::cli
