#include "stats_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gnuplot_plot.hpp"
#include "json_input.hpp"
#include "json_output.hpp"
#include "length_trace.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/sim/length_statistics.hpp"
#include "odbatch/text/tokenize_result.hpp"
#include "temporary_directory.hpp"

namespace odbatch::cli {
namespace {

// Token budgets whose over-budget share and window advice the report lists.
constexpr std::uint32_t kBudgets[] = {1024, 2048, 4096, 8192, 12288, 16384, 32768};
// PROTOCOL.md's sizing advice: a window of about 64 mean-sized groups.
constexpr double kGroupsPerWindow = 64;

PipelineConfig dataset_config(const StatsOptions& options) {
  if (!options.tokenizer)
    throw InputError(options.input.string() +
                     ": a JSONL dataset needs --tokenizer MODEL (or pass a pipeline TOML file)");
  PipelineConfig c;
  c.source.files = {options.input.string()};
  c.source.image_root = options.image_root.value_or(options.input.parent_path());
  c.tokenizer.model = *options.tokenizer;
  // The worker counts of examples/pipeline.toml; everything else keeps PipelineConfig's defaults.
  c.tokenizer.workers = 2;
  c.images.workers = 2;
  return c;
}

PipelineConfig input_config(const StatsOptions& options) {
  return options.input.extension() == ".toml" ? PipelineConfig::from_toml_file(options.input)
                                              : dataset_config(options);
}

PipelineConfig per_sample_config(PipelineConfig c) {
  // Every sample its own step: under a token budget of 1 each sample is an over-budget
  // singleton, so each batch carries exactly one sample's lengths. Samples over the real budget
  // are counted, not rejected, whatever the file says: the distribution shows what a budget has
  // to hold.
  c.batching.token_budget = 1;
  c.batching.patch_budget = 0;
  c.batching.over_budget = OverBudgetPolicy::singleton;
  return c;
}

// The epoch's over_length rejections by cause, from its ledger: an image that does not fit
// within max_seq_len (the rejection names images.max_pixels, tokenize_result.hpp) or the text.
struct OverLength {
  std::uint64_t images = 0;
  std::uint64_t text = 0;
};

OverLength over_length_causes(const std::filesystem::path& ledger) {
  OverLength causes;
  std::ifstream in(ledger);
  std::string line;
  while (std::getline(in, line)) {
    const auto entry = nlohmann::json::parse(line, nullptr, false);
    if (entry.is_discarded() || entry.value("kind", "") != "rejected" ||
        entry.value("reason", "") != "over_length")
      continue;
    const bool image = entry.value("detail", "").find(kImageOverLengthRemedy) != std::string::npos;
    ++(image ? causes.images : causes.text);
  }
  return causes;
}

SampleCost sample_of(const Batch& batch) {
  const StepInfo& info = batch.step_info();
  if (info.sample_ids.size() != 1)
    throw std::logic_error("a step of " + std::to_string(info.sample_ids.size()) +
                           " samples under a token budget of 1");
  SampleCost s;
  s.id = info.sample_ids.front();
  s.tokens = static_cast<std::uint32_t>(info.tokens);
  s.labels = static_cast<std::uint32_t>(info.labels);
  const auto grids = batch.image_grid_thw();  // (t, h, w) per image
  for (std::size_t i = 0; i + 2 < grids.size(); i += 3)
    s.patches += static_cast<std::uint32_t>(grids[i] * grids[i + 1] * grids[i + 2]);
  return s;
}

std::vector<std::uint32_t> field(std::span<const SampleCost> samples,
                                 std::uint32_t SampleCost::*member) {
  std::vector<std::uint32_t> values;
  values.reserve(samples.size());
  for (const auto& s : samples) values.push_back(s.*member);
  return values;
}

Report statistics_report(const LengthStatistics& s) {
  Report percentiles = Report::object();
  for (const auto& p : s.percentiles) percentiles["p" + std::to_string(p.percent)] = p.value;
  Report histogram = Report::array();
  for (const auto& b : s.histogram) histogram.push_back({b.low, b.high, b.count});
  return {{"count", s.count},
          {"sum", s.sum},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"cv", s.cv},
          {"min", s.min},
          {"max", s.max},
          {"percentiles", percentiles},
          {"histogram_bins", "[low, high, count]"},
          {"histogram", histogram}};
}

void print_statistics_row(const char* name, const LengthStatistics& s) {
  std::printf("%-8s %9.1f %6.3f %7u", name, s.mean, s.cv, s.min);
  for (const auto& p : s.percentiles) std::printf(" %7u", p.value);
  std::printf(" %7u\n", s.max);
}

void print_report(const Report& report, const LengthStatistics& tokens,
                  const LengthStatistics& labels, const LengthStatistics& patches) {
  std::printf("samples: %llu (records %llu, rejected %llu",
              report["samples"].get<unsigned long long>(),
              report["records"].get<unsigned long long>(),
              report["rejected"]["total"].get<unsigned long long>());
  for (const auto& [reason, count] : report["rejected"]["by_reason"].items())
    std::printf("; %s %llu", reason.c_str(), count.get<unsigned long long>());
  std::printf("), with images: %llu\n", report["samples_with_images"].get<unsigned long long>());
  const auto& over = report["over_max_seq_len"];
  if (over["images"].get<std::uint64_t>() + over["text"].get<std::uint64_t>() > 0)
    std::printf(
        "over max_seq_len %llu: %llu for an image (lower images.max_pixels), %llu for their "
        "text (raise batching.max_seq_len, or over_length = \"truncate\")\n",
        over["max_seq_len"].get<unsigned long long>(), over["images"].get<unsigned long long>(),
        over["text"].get<unsigned long long>());
  std::printf("\n");
  std::printf("%-8s %9s %6s %7s", "", "mean", "CV", "min");
  for (const auto& p : tokens.percentiles)
    std::printf(" %7s", ("p" + std::to_string(p.percent)).c_str());
  std::printf(" %7s\n", "max");
  print_statistics_row("tokens", tokens);
  print_statistics_row("labels", labels);
  print_statistics_row("patches", patches);

  std::uint64_t largest = 1;
  for (const auto& b : tokens.histogram) largest = std::max(largest, b.count);
  std::printf("\ntokens histogram\n");
  for (const auto& b : tokens.histogram) {
    const auto bar = static_cast<int>(40 * b.count / largest);
    std::printf("%7u-%-7u %8llu %.*s\n", b.low, b.high, static_cast<unsigned long long>(b.count),
                bar, "########################################");
  }
  std::printf("\n%12s %12s %16s %14s\n", "token_budget", "over budget", "mean-length/group",
              "window advice");
  for (const auto& row : report["token_budgets"])
    std::printf("%12u %11.2f%% %16.1f %14llu\n", row["token_budget"].get<unsigned>(),
                100 * row["over_budget_share"].get<double>(),
                row["mean_samples_per_group"].get<double>(),
                row["window_advice"].get<unsigned long long>());
}

// "low high count" lines of `bins` log-spaced bins from the shortest to the longest sample.
std::string log_histogram_data(const std::vector<std::uint32_t>& lengths, std::uint32_t bins) {
  const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
  const double low = std::max(1u, *shortest), high = std::max<double>(*longest + 1, low * 1.01);
  const double ratio = std::pow(high / low, 1.0 / bins);
  std::vector<std::uint64_t> counts(bins, 0);
  for (const auto length : lengths) {
    const auto bin =
        static_cast<std::size_t>(std::log(std::max(1u, length) / low) / std::log(ratio));
    ++counts[std::min<std::size_t>(bin, bins - 1)];
  }
  std::string data;
  for (std::uint32_t i = 0; i < bins; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "%.6g %.6g %llu\n", low * std::pow(ratio, i),
                  low * std::pow(ratio, i + 1), static_cast<unsigned long long>(counts[i]));
    data += line;
  }
  return data;
}

// A log-x histogram of the samples' token lengths with the pipeline's token budget as a vertical
// line and its window in the title.
void plot_token_lengths(const std::filesystem::path& output,
                        const std::vector<std::uint32_t>& tokens, std::uint32_t bins,
                        const BatchingConfig& batching) {
  if (tokens.empty()) throw std::runtime_error("no samples to plot");
  const auto longest = *std::max_element(tokens.begin(), tokens.end());
  const auto shortest = *std::min_element(tokens.begin(), tokens.end());
  const std::string budget = std::to_string(batching.token_budget);
  const std::string script =
      "set title " +
      gnuplot_quoted("token lengths of " + std::to_string(tokens.size()) + " samples (window " +
                     std::to_string(batching.window) + " samples per round)") +
      " noenhanced\n"
      "set logscale x 10\n"
      "set xrange [" +
      std::to_string(std::max(1.0, shortest / 1.5)) + ":" +
      std::to_string(std::max(longest, batching.token_budget) * 1.5) +
      "]\n"
      "set yrange [0:*]\n"
      "set xlabel 'tokens per sample (log scale)'\n"
      "set ylabel 'samples'\n"
      "set grid xtics ytics\n"
      "set style fill solid 0.6 border lc rgb '#1f4e79'\n"
      "set arrow from " +
      budget + ", graph 0 to " + budget +
      ", graph 1 nohead lw 2 dt 2 lc rgb '#c00000'\n"
      "set label " +
      gnuplot_quoted("token budget " + budget) + " at " + budget +
      ", graph 0.95 right offset -0.5,0 tc rgb '#c00000' noenhanced\n"
      "set key off\n"
      "plot data using (sqrt($1*$2)):3:1:2:(0):3 with boxxyerror lc rgb '#4f81bd'\n";
  draw_with_gnuplot(output, script, log_histogram_data(tokens, bins));
}

}  // namespace

int run_stats_command(const StatsOptions& options) {
  std::optional<Pipeline> pipeline;
  BatchingConfig batching;
  std::optional<TemporaryDirectory> scratch;  // for the ledger the rejections are read from
  std::filesystem::path ledger;
  try {
    if (options.plot) gnuplot_terminal(*options.plot);
    PipelineConfig config = input_config(options);
    batching = config.batching;
    ledger = scratch.emplace("odbatch-stats").path() / "ledger.jsonl";
    PipelineOptions pipeline_options;
    pipeline_options.ledger = ledger;
    pipeline.emplace(per_sample_config(std::move(config)), DistEnv::single(), pipeline_options);
  } catch (const std::exception& e) {
    std::cerr << "odbatch stats: " << e.what() << '\n';
    return 2;
  }
  std::vector<SampleCost> samples;
  try {
    pipeline->start_epoch(0);
    while (const auto batch = pipeline->next_batch())
      if (!batch->step_info().idle) samples.push_back(sample_of(*batch));
  } catch (const std::exception& e) {
    std::cerr << "odbatch stats: pipeline failed: " << e.what() << '\n';
    return 1;
  }
  std::sort(samples.begin(), samples.end(),
            [](const SampleCost& a, const SampleCost& b) { return a.id < b.id; });
  const auto tokens = summarize_lengths(field(samples, &SampleCost::tokens), options.bins);
  const auto labels = summarize_lengths(field(samples, &SampleCost::labels), options.bins);
  const auto patches = summarize_lengths(field(samples, &SampleCost::patches), options.bins);

  const StatsSnapshot snapshot = pipeline->stats();
  Report report = command_report("stats");
  report["input"] = options.input.string();
  report["records"] = pipeline->dataset_records();
  report["samples"] = samples.size();
  Report by_reason = Report::object();
  for (const auto& [reason, count] : snapshot.rejected_by_reason) by_reason[reason] = count;
  report["rejected"] = {{"total", snapshot.samples_rejected}, {"by_reason", by_reason}};
  pipeline.reset();  // the ledger is complete once the pipeline is gone
  const OverLength over_length = over_length_causes(ledger);
  report["over_max_seq_len"] = {{"max_seq_len", batching.max_seq_len},
                                {"images", over_length.images},
                                {"text", over_length.text}};
  report["samples_with_images"] = std::count_if(samples.begin(), samples.end(),
                                                [](const SampleCost& s) { return s.patches > 0; });
  report["tokens"] = statistics_report(tokens);
  report["labels"] = statistics_report(labels);
  report["patches"] = statistics_report(patches);
  Report budgets = Report::array();
  for (const auto budget : kBudgets) {
    const auto over = std::count_if(samples.begin(), samples.end(),
                                    [&](const SampleCost& s) { return s.tokens > budget; });
    const double mean = std::max(tokens.mean, 1.0);
    budgets.push_back(
        {{"token_budget", budget},
         {"over_budget_share",
          samples.empty() ? 0.0 : static_cast<double>(over) / static_cast<double>(samples.size())},
         {"mean_samples_per_group", budget / mean},
         {"window_advice",
          static_cast<std::uint64_t>(std::ceil(kGroupsPerWindow * budget / mean))}});
  }
  report["token_budgets"] = std::move(budgets);
  if (options.trace) report["trace"] = options.trace->string();

  try {
    if (options.trace) write_length_trace(*options.trace, samples);
    if (options.json) {
      std::ofstream out(*options.json);
      out << to_readable_json(report) << '\n';
      if (!out) throw InputError("cannot write " + options.json->string());
    }
  } catch (const InputError& e) {
    std::cerr << "odbatch stats: " << e.what() << '\n';
    return 2;
  }
  print_report(report, tokens, labels, patches);
  if (options.plot) {
    try {
      plot_token_lengths(*options.plot, field(samples, &SampleCost::tokens), options.bins,
                         batching);
    } catch (const std::exception& e) {
      std::cerr << "odbatch stats: --plot " << options.plot->string() << ": " << e.what() << '\n';
      return 1;
    }
    std::printf("\nplot: %s\n", options.plot->string().c_str());
  }
  return 0;
}

}  // namespace odbatch::cli
