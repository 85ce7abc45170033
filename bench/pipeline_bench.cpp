// Times the whole actor pipeline on the real dataset and, in the same process and on the same
// records, each preprocessing stage alone (read+parse, JPEG decode, chat tokenization), so the
// actor graph's CPU overhead is a ratio measured side by side:
//   end-to-end process CPU per record / sum of the stages' CPU per record   (target <= 1.25).
// The pair is measured --repeat times and the median reported, since CPU times on a small shared
// machine drift by tens of percent between minutes. Then the pipeline runs once more with a
// consumer slower than it (sleeping a fixed time per batch) to show whether the trainer still
// waits once the first window is ready.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "bench_report.hpp"
#include "bench_timing.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_file.hpp"
#include "odbatch/metrics/pipeline_stats.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/text/chat_tokenizer.hpp"

namespace odbatch::bench {
namespace {

constexpr double kOverheadTarget = 1.25;

struct Options {
  std::string config = std::string(ODBATCH_SOURCE_DIR) + "/examples/pipeline.toml";
  std::uint64_t epochs = 1;
  // Side-by-side measurements (stages alone, then the pipeline); the median ratio is reported.
  std::uint64_t repeat = 3;
  // The slow consumer sleeps this many times the fast run's mean production time per batch.
  double slow_factor = 1.5;
  std::string out_path;
};

// User + system CPU of every thread of this process.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double thread_cpu_seconds() {
  return static_cast<double>(thread_cpu_ns()) * 1e-9;
}

double per_record_us(double cpu_seconds, std::uint64_t records) {
  return records ? 1e6 * cpu_seconds / static_cast<double>(records) : 0.0;
}

double load_average() {
  double load[1] = {0.0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

// A parsed record with what its images resolve to, as the stages alone see it.
struct ParsedRecord {
  Conversation conversation;
  std::vector<std::uint32_t> visual_tokens;  // one per image, filled by the decode pass
  bool images_ok = true;
};

struct StageTime {
  std::uint64_t items = 0;
  double cpu_seconds = 0.0;
};

struct Baselines {
  std::uint64_t records = 0;
  StageTime read_parse;  // items: records parsed into conversations
  StageTime decode;      // items: images read from disk and decoded to their patch grid
  StageTime tokenize;    // items: conversations tokenized
  // The same images decoded by as many threads at once as the pipeline has decoder workers: the
  // like-for-like baseline of its decoder pool, since concurrent decoders share caches and memory.
  StageTime decode_concurrent;
  std::uint32_t decode_threads = 1;
};

// Pulls every record and image file through the page cache once, so neither the baselines nor
// the pipeline pays for the first read from disk.
void warm_file_cache(const PipelineConfig& config, const RecordReader& records) {
  for (SampleId id = 0; id < records.index().record_count(); ++id) {
    const auto record = records.read(id);
    const auto* r = std::get_if<Record>(&record);
    if (!r) continue;
    const auto parsed = parse_conversation(r->text, r->where());
    if (const auto* conversation = std::get_if<Conversation>(&parsed))
      for (const auto& image : conversation->images)
        (void)read_image_file(config.source.image_root, image, config.images.file_limits);
  }
}

// Decodes `images` on `threads` threads at once (image i on thread i % threads); the CPU time is
// the sum of the threads' own.
StageTime decode_concurrently(const PipelineConfig& config,
                              const std::vector<const std::string*>& images,
                              std::uint32_t threads) {
  std::vector<double> cpu(threads, 0.0);
  std::vector<std::thread> workers;
  for (std::uint32_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ImageDecoder decoder(config.images.decoder_limits);
      DecodedImage scratch;
      const double start = thread_cpu_seconds();
      for (std::size_t i = t; i < images.size(); i += threads) {
        auto bytes =
            read_image_file(config.source.image_root, *images[i], config.images.file_limits);
        if (bytes) (void)decoder.decode(bytes.value(), config.images.geometry, scratch);
      }
      cpu[t] = thread_cpu_seconds() - start;
    });
  }
  for (auto& worker : workers) worker.join();
  StageTime time{images.size(), 0.0};
  for (const double seconds : cpu) time.cpu_seconds += seconds;
  return time;
}

// Each preprocessing stage alone, single-threaded, over every record of the dataset (the records
// a single rank reads in an epoch). Thread CPU time, so other processes' load counts less.
Baselines measure_baselines(const PipelineConfig& config, const RecordReader& records) {
  Baselines b;
  b.records = records.index().record_count();
  std::vector<ParsedRecord> parsed;
  parsed.reserve(b.records);

  double start = thread_cpu_seconds();
  for (SampleId id = 0; id < b.records; ++id) {
    const auto record = records.read(id);
    const auto* r = std::get_if<Record>(&record);
    if (!r) continue;
    auto conversation = parse_conversation(r->text, r->where());
    if (auto* c = std::get_if<Conversation>(&conversation))
      parsed.push_back(ParsedRecord{std::move(*c), {}, true});
  }
  b.read_parse = {parsed.size(), thread_cpu_seconds() - start};

  ImageDecoder decoder(config.images.decoder_limits);
  DecodedImage scratch;
  std::vector<const std::string*> images;  // every image the single-threaded pass decodes
  start = thread_cpu_seconds();
  for (auto& record : parsed) {
    for (const auto& image : record.conversation.images) {
      auto bytes = read_image_file(config.source.image_root, image, config.images.file_limits);
      ++b.decode.items;
      images.push_back(&image);
      if (!bytes || decoder.decode(bytes.value(), config.images.geometry, scratch)) {
        record.images_ok = false;
        break;
      }
      record.visual_tokens.push_back(scratch.grid.tokens);
    }
  }
  b.decode.cpu_seconds = thread_cpu_seconds() - start;
  b.decode_threads = config.images.workers;
  b.decode_concurrent = decode_concurrently(config, images, b.decode_threads);

  const ChatTokenizer tokenizer(config.tokenizer.model, effective_tokenizer_options(config));
  start = thread_cpu_seconds();
  for (const auto& record : parsed) {
    if (!record.images_ok) continue;
    (void)tokenizer.tokenize(record.conversation, record.visual_tokens);
    ++b.tokenize.items;
  }
  b.tokenize.cpu_seconds = thread_cpu_seconds() - start;
  return b;
}

// A wait of the trainer after its epoch's first batch, and the step that ended it.
struct Wait {
  double seconds = 0.0;
  std::uint64_t epoch = 0;
  std::optional<std::uint64_t> step;  // none: the wait for the end of the epoch
  std::uint64_t round = 0;
};

// The waits worth showing: the longest few.
constexpr std::size_t kLongestWaits = 5;

struct ConsumerRun {
  double wall_seconds = 0.0;
  double process_cpu_seconds = 0.0;
  double first_batch_seconds = 0.0;       // summed over epochs: start_epoch to the first batch
  double wait_after_first_seconds = 0.0;  // next_batch() blocked after each epoch's first batch
  std::vector<Wait> longest_waits;        // longest first
  StatsSnapshot stats;

  void note_wait(const Wait& wait) {
    wait_after_first_seconds += wait.seconds;
    longest_waits.push_back(wait);
    std::sort(longest_waits.begin(), longest_waits.end(),
              [](const Wait& a, const Wait& b) { return a.seconds > b.seconds; });
    if (longest_waits.size() > kLongestWaits) longest_waits.pop_back();
  }
};

// Runs `epochs` epochs, consuming each batch and then sleeping `per_batch` (0: as fast as
// possible).
ConsumerRun consume(const PipelineConfig& config, std::uint64_t epochs,
                    std::chrono::microseconds per_batch) {
  Pipeline pipeline(config);
  ConsumerRun run;
  const auto start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    pipeline.start_epoch(epoch);
    bool first = true;
    while (true) {
      const auto wait_start = Clock::now();
      const auto batch = pipeline.next_batch();
      const double waited = seconds_since(wait_start);
      if (first) {
        run.first_batch_seconds += seconds_since(epoch_start);
        first = false;
      } else if (batch) {
        run.note_wait({waited, epoch, batch->step_info().step, batch->step_info().round});
      } else {
        run.note_wait({waited, epoch, std::nullopt, 0});
      }
      if (!batch) break;
      if (per_batch.count() > 0) std::this_thread::sleep_for(per_batch);
    }
  }
  run.process_cpu_seconds = process_cpu_seconds() - cpu_start;
  run.wall_seconds = seconds_since(start);
  run.stats = pipeline.stats();
  return run;
}

Report waits_report(const ConsumerRun& run) {
  Report waits = Report::array();
  for (const auto& w : run.longest_waits) {
    Report entry{{"seconds", rounded(w.seconds, 4)}, {"epoch", w.epoch}};
    if (w.step) {
      entry["step"] = *w.step;
      entry["round"] = w.round;
    } else {
      entry["step"] = "end of epoch";
    }
    waits.push_back(std::move(entry));
  }
  return waits;
}

// CPU the pipeline's stages account for (thread CPU of their work), summed.
double stages_cpu_seconds(const StatsSnapshot& s) {
  double total = 0.0;
  for (const auto* stage : {&s.reader, &s.tokenizer, &s.image_decoder, &s.joiner, &s.packer,
                            &s.aligner, &s.coordinator, &s.emitter})
    total += stage->cpu_seconds;
  return total;
}

Report stage_report(const StageSnapshot& s) {
  return {{"items", s.items},
          {"cpu_seconds", rounded(s.cpu_seconds, 3)},
          {"blocked_seconds", rounded(s.blocked_seconds, 3)}};
}

Report end_to_end_report(const ConsumerRun& run) {
  const auto& s = run.stats;
  const double wall = run.wall_seconds;
  return {{"wall_seconds", rounded(wall, 3)},
          {"records_read", s.records_read},
          {"samples_emitted", s.samples_emitted},
          {"samples_rejected", s.samples_rejected},
          {"batches", s.batches},
          {"tokens", s.tokens},
          {"samples_per_second", rounded(static_cast<double>(s.samples_emitted) / wall, 1)},
          {"tokens_per_second", rounded(static_cast<double>(s.tokens) / wall, 0)},
          {"process_cpu_seconds", rounded(run.process_cpu_seconds, 3)},
          {"process_cpu_us_per_record",
           rounded(per_record_us(run.process_cpu_seconds, s.records_read), 1)},
          {"seconds_to_first_batch", rounded(run.first_batch_seconds, 3)},
          {"trainer_wait_after_first_batch_seconds", rounded(run.wait_after_first_seconds, 3)},
          {"stats_seconds_to_first_batch", rounded(s.seconds_to_first_batch, 3)},
          {"stats_trainer_wait_seconds", rounded(s.trainer_wait_seconds, 3)},
          {"stages",
           {{"reader", stage_report(s.reader)},
            {"tokenizer", stage_report(s.tokenizer)},
            {"image_decoder", stage_report(s.image_decoder)},
            {"joiner", stage_report(s.joiner)},
            {"packer", stage_report(s.packer)},
            {"aligner", stage_report(s.aligner)},
            {"coordinator", stage_report(s.coordinator)},
            {"emitter", stage_report(s.emitter)}}}};
}

Report baseline_report(const StageTime& stage, std::uint64_t records) {
  return {{"items", stage.items},
          {"cpu_seconds", rounded(stage.cpu_seconds, 3)},
          {"cpu_us_per_record", rounded(per_record_us(stage.cpu_seconds, records), 1)}};
}

// One side-by-side measurement: the stages alone, then the pipeline, on the same records.
struct Measurement {
  Baselines baselines;
  ConsumerRun pipeline;
  double stages_us = 0.0;             // the baselines' CPU per record, summed
  double concurrent_stages_us = 0.0;  // the same with the concurrent decode baseline
  double end_to_end_us = 0.0;         // the pipeline's process CPU per record

  double ratio() const { return stages_us > 0 ? end_to_end_us / stages_us : 0.0; }
  double concurrent_ratio() const {
    return concurrent_stages_us > 0 ? end_to_end_us / concurrent_stages_us : 0.0;
  }
};

Measurement measure(const PipelineConfig& config, const RecordReader& records,
                    std::uint64_t epochs) {
  Measurement m;
  m.baselines = measure_baselines(config, records);
  m.pipeline = consume(config, epochs, std::chrono::microseconds(0));
  const auto& b = m.baselines;
  const double read_parse_us = per_record_us(b.read_parse.cpu_seconds, b.records);
  const double tokenize_us = per_record_us(b.tokenize.cpu_seconds, b.records);
  m.stages_us = read_parse_us + per_record_us(b.decode.cpu_seconds, b.records) + tokenize_us;
  m.concurrent_stages_us =
      read_parse_us + per_record_us(b.decode_concurrent.cpu_seconds, b.records) + tokenize_us;
  m.end_to_end_us = per_record_us(m.pipeline.process_cpu_seconds, m.pipeline.stats.records_read);
  return m;
}

Report overhead_report(const Measurement& m) {
  const ConsumerRun& run = m.pipeline;
  const double in_stages = stages_cpu_seconds(run.stats);
  return {
      {"end_to_end_cpu_us_per_record", rounded(m.end_to_end_us, 1)},
      {"stages_sum_cpu_us_per_record", rounded(m.stages_us, 1)},
      {"ratio", rounded(m.ratio(), 3)},
      {"target", kOverheadTarget},
      {"met", m.ratio() <= kOverheadTarget},
      // The same with the concurrent decode baseline in place of the single-threaded one.
      {"stages_sum_with_concurrent_decode_cpu_us_per_record", rounded(m.concurrent_stages_us, 1)},
      {"ratio_with_concurrent_decode", rounded(m.concurrent_ratio(), 3)},
      // Where the end-to-end CPU went: the stages' own work inside the pipeline, and everything
      // else (actor messaging and scheduling, the batch queue, the consuming thread).
      {"pipeline_stages_cpu_seconds", rounded(in_stages, 3)},
      {"outside_stages_cpu_seconds", rounded(run.process_cpu_seconds - in_stages, 3)},
      {"outside_stages_share",
       rounded(run.process_cpu_seconds > 0
                   ? (run.process_cpu_seconds - in_stages) / run.process_cpu_seconds
                   : 0.0,
               4)},
      // The same decoding code on the same images, inside the pipeline versus alone.
      {"decoder_stage_cpu_over_decode_baseline",
       rounded(m.baselines.decode.cpu_seconds > 0
                   ? per_record_us(run.stats.image_decoder.cpu_seconds, run.stats.records_read) /
                         per_record_us(m.baselines.decode.cpu_seconds, m.baselines.records)
                   : 0.0,
               3)}};
}

int run(const Options& options) {
  const PipelineConfig config = PipelineConfig::from_toml_file(options.config);
  Report report;
  report["benchmark"] = "pipeline";
  report["config"] = options.config;
  report["epochs"] = options.epochs;
  report["repeat"] = options.repeat;
  report["cores"] = std::thread::hardware_concurrency();
  report["load_average_at_start"] = rounded(load_average(), 2);

  const auto index = std::make_shared<const DatasetIndex>(build_dataset_index(config.source));
  const RecordReader records(index, config.source.reader);
  report["records"] = index->record_count();
  warm_file_cache(config, records);

  // Side-by-side measurements; the one with the median ratio is reported in full.
  std::vector<Measurement> measurements;
  for (std::uint64_t i = 0; i < options.repeat; ++i)
    measurements.push_back(measure(config, records, options.epochs));
  std::vector<const Measurement*> by_ratio;
  for (const auto& m : measurements) by_ratio.push_back(&m);
  std::sort(by_ratio.begin(), by_ratio.end(),
            [](const Measurement* a, const Measurement* b) { return a->ratio() < b->ratio(); });
  const Measurement& median = *by_ratio[by_ratio.size() / 2];
  const ConsumerRun& fast = median.pipeline;

  const double batch_seconds =
      fast.stats.batches ? fast.wall_seconds / static_cast<double>(fast.stats.batches) : 0.0;
  const auto sleep = std::chrono::microseconds(
      static_cast<std::int64_t>(options.slow_factor * batch_seconds * 1e6));
  const ConsumerRun slow = consume(config, options.epochs, sleep);

  report["end_to_end"] = end_to_end_report(fast);
  const Baselines& baselines = median.baselines;
  report["stage_baselines"] = {
      {"read_parse", baseline_report(baselines.read_parse, baselines.records)},
      {"decode", baseline_report(baselines.decode, baselines.records)},
      {"tokenize", baseline_report(baselines.tokenize, baselines.records)},
      {"decode_concurrent", baseline_report(baselines.decode_concurrent, baselines.records)},
      {"decode_concurrent_threads", baselines.decode_threads}};
  report["overhead"] = overhead_report(median);
  Report ratios = Report::array(), concurrent_ratios = Report::array();
  for (const auto& m : measurements) {
    ratios.push_back(rounded(m.ratio(), 3));
    concurrent_ratios.push_back(rounded(m.concurrent_ratio(), 3));
  }
  report["overhead"]["ratio_per_repeat"] = std::move(ratios);
  report["overhead"]["ratio_with_concurrent_decode_per_repeat"] = std::move(concurrent_ratios);
  report["slow_consumer"] = {
      {"sleep_ms_per_batch", rounded(static_cast<double>(sleep.count()) * 1e-3, 3)},
      {"slow_factor", options.slow_factor},
      {"wall_seconds", rounded(slow.wall_seconds, 3)},
      {"batches", slow.stats.batches},
      {"seconds_to_first_batch", rounded(slow.first_batch_seconds, 3)},
      {"trainer_wait_after_first_batch_seconds", rounded(slow.wait_after_first_seconds, 3)},
      {"longest_waits_after_first_batch", waits_report(slow)},
      {"stats_trainer_wait_seconds", rounded(slow.stats.trainer_wait_seconds, 3)}};
  report["load_average_at_end"] = rounded(load_average(), 2);
  emit_report(report, options.out_path);
  return 0;
}

double parse_factor(std::string_view flag, const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::logic_error&) {
    used = 0;  // not a number, or out of range
  }
  if (used == 0 || used != text.size() || !(value > 1.0))
    throw std::invalid_argument(std::string(flag) + " expects a number above 1, got '" + text +
                                "'");
  return value;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    odbatch::bench::Options options;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--config" && has_value) {
        options.config = argv[++i];
      } else if (arg == "--epochs" && has_value) {
        options.epochs = odbatch::bench::parse_count(arg, argv[++i]);
      } else if (arg == "--repeat" && has_value) {
        options.repeat = odbatch::bench::parse_count(arg, argv[++i]);
      } else if (arg == "--slow-factor" && has_value) {
        options.slow_factor = odbatch::bench::parse_factor(arg, argv[++i]);
      } else if (arg == "--out" && has_value) {
        options.out_path = argv[++i];
      } else {
        std::cerr << "usage: " << argv[0]
                  << " [--config FILE (examples/pipeline.toml)] [--epochs N (1)] [--repeat N (3)]"
                     " [--slow-factor X (1.5)] [--out FILE]\n";
        return 2;
      }
    }
    return odbatch::bench::run(options);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
