#include "run_command.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "json_output.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/config/checkpoint_file.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/dist/fault_injecting_collective.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"

namespace odbatch::cli {
namespace {

using Clock = std::chrono::steady_clock;

// a / b, or 0 when b is 0.
double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}
double real(std::uint64_t count) {
  return static_cast<double>(count);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One epoch's progress on stderr until stopped: on a terminal a bar redrawn twice a second, else
// (a file or a pipe) a plain line every kPlainInterval, as logs want it. Counts are the epoch's
// own (the pipeline's are cumulative over epochs); records read count from the first record, so
// progress shows while the lookahead fills, before the first batch.
class ProgressLine {
 public:
  static constexpr std::chrono::seconds kPlainInterval{10};

  // `at_start` is taken before the epoch starts: its readers begin at once, and a snapshot taken
  // after would miss what they read meanwhile.
  ProgressLine(const Pipeline& pipeline, std::uint64_t epoch, std::uint64_t shard_records,
               StatsSnapshot at_start)
      : pipeline_(pipeline),
        epoch_(epoch),
        shard_records_(shard_records),
        at_start_(std::move(at_start)),
        terminal_(isatty(STDERR_FILENO) == 1),
        start_(Clock::now()) {
    thread_ = std::thread([this] { run(); });
  }
  ~ProgressLine() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    draw();
    if (terminal_) std::fputc('\n', stderr);
  }

 private:
  void run() {
    const auto interval = terminal_ ? std::chrono::milliseconds(500) : kPlainInterval;
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [&] { return stop_; })) draw();
  }
  void draw() const {
    const auto s = pipeline_.stats();
    const double elapsed = std::max(seconds_since(start_), 1e-9);
    const std::uint64_t read = s.records_read - at_start_.records_read;
    const std::uint64_t samples = s.samples_emitted - at_start_.samples_emitted;
    const std::uint64_t rejected = s.samples_rejected - at_start_.samples_rejected;
    const std::uint64_t batches = s.batches - at_start_.batches;
    const double tokens = real(s.tokens - at_start_.tokens);
    const double done =
        shard_records_ ? std::min(1.0, ratio(real(read), real(shard_records_))) : 1.0;
    if (terminal_) {
      std::fprintf(
          stderr,
          "\repoch %llu [%-30.*s] %5.1f%%  %llu read  %llu samples  %llu rejected  %llu "
          "batches  %.0f samples/s  %.0f tokens/s   ",
          static_cast<unsigned long long>(epoch_), static_cast<int>(done * 30),
          "##############################", done * 100, static_cast<unsigned long long>(read),
          static_cast<unsigned long long>(samples), static_cast<unsigned long long>(rejected),
          static_cast<unsigned long long>(batches), real(samples) / elapsed, tokens / elapsed);
    } else {
      std::fprintf(
          stderr,
          "odbatch run: epoch %llu: %.1f%% (%llu of %llu records read), %llu samples, "
          "%llu rejected, %llu batches, %.0f samples/s after %.0f s\n",
          static_cast<unsigned long long>(epoch_), done * 100,
          static_cast<unsigned long long>(read), static_cast<unsigned long long>(shard_records_),
          static_cast<unsigned long long>(samples), static_cast<unsigned long long>(rejected),
          static_cast<unsigned long long>(batches), real(samples) / elapsed, elapsed);
    }
  }

  const Pipeline& pipeline_;
  std::uint64_t epoch_;
  std::uint64_t shard_records_;
  StatsSnapshot at_start_;
  bool terminal_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

Report stage_json(const StageSnapshot& stage) {
  return {{"items", stage.items},
          {"cpu_seconds", stage.cpu_seconds},
          {"cpu_us_per_item", ratio(1e6 * stage.cpu_seconds, real(stage.items))},
          {"blocked_seconds", stage.blocked_seconds}};
}

Report summary_json(const StatsSnapshot& s, std::uint64_t steps_taken, double wall_seconds,
                    double process_cpu) {
  Report rejected = Report::object();
  for (const auto& [reason, count] : s.rejected_by_reason) rejected[reason] = count;
  const std::uint64_t real_batches = s.batches - s.idle_batches;
  Report stages = Report::object();
  for (const auto& [name, stage] : s.named_stages()) stages[std::string(name)] = stage_json(*stage);
  Report summary = command_report("run");
  summary.update(
      Report{{"wall_seconds", wall_seconds},
             {"process_cpu_seconds", process_cpu},
             {"records_read", s.records_read},
             {"samples_emitted", s.samples_emitted},
             {"samples_rejected", s.samples_rejected},
             {"rejected_by_reason", rejected},
             {"batches", s.batches},
             {"idle_batches", s.idle_batches},
             {"steps_taken", steps_taken},
             {"tokens", s.tokens},
             {"labels", s.labels},
             {"padding_efficiency", s.padding_efficiency()},
             {"mean_tokens_per_batch", ratio(real(s.tokens), real(real_batches))},
             {"mean_samples_per_batch", ratio(real(s.samples_emitted), real(real_batches))},
             {"samples_per_second", ratio(real(s.samples_emitted), wall_seconds)},
             {"tokens_per_second", ratio(real(s.tokens), wall_seconds)},
             {"seconds_to_first_batch", s.seconds_to_first_batch},
             {"trainer_wait_seconds", s.trainer_wait_seconds},
             {"stages", stages}});
  return summary;
}

void print_summary(const Report& j) {
  std::printf("samples: %llu emitted, %llu rejected",
              j["samples_emitted"].get<unsigned long long>(),
              j["samples_rejected"].get<unsigned long long>());
  for (const auto& [reason, count] : j["rejected_by_reason"].items())
    std::printf(" (%s %llu)", reason.c_str(), count.get<unsigned long long>());
  std::printf(
      "\nsteps: %llu taken; batches: %llu emitted (%llu IDLE), %.1f samples and %.0f tokens per "
      "batch, padding efficiency %.4f\n",
      j["steps_taken"].get<unsigned long long>(), j["batches"].get<unsigned long long>(),
      j["idle_batches"].get<unsigned long long>(), j["mean_samples_per_batch"].get<double>(),
      j["mean_tokens_per_batch"].get<double>(), j["padding_efficiency"].get<double>());
  std::printf(
      "throughput: %.0f samples/s, %.0f tokens/s over %.2f s; first batch after %.2f s; "
      "trainer waited %.2f s\n",
      j["samples_per_second"].get<double>(), j["tokens_per_second"].get<double>(),
      j["wall_seconds"].get<double>(), j["seconds_to_first_batch"].get<double>(),
      j["trainer_wait_seconds"].get<double>());
  std::printf("%-14s %10s %12s %14s %12s\n", "stage", "items", "cpu s", "cpu us/item", "blocked s");
  for (const auto& [name, stage] : j["stages"].items())
    std::printf("%-14s %10llu %12.3f %14.1f %12.3f\n", name.c_str(),
                stage["items"].get<unsigned long long>(), stage["cpu_seconds"].get<double>(),
                stage["cpu_us_per_item"].get<double>(), stage["blocked_seconds"].get<double>());
}

double process_cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

// `path` with "{rank}" replaced by the rank. Ranks of one run must not share an output file.
std::filesystem::path rank_path(const std::filesystem::path& path, const DistEnv& dist,
                                const std::string& option) {
  std::string text = path.string();
  const auto at = text.find("{rank}");
  if (at == std::string::npos) {
    if (dist.world_size > 1)
      throw std::invalid_argument(option + " " + text +
                                  ": with WORLD_SIZE=" + std::to_string(dist.world_size) +
                                  " every rank needs a file of its own; put {rank} in the path");
    return path;
  }
  return text.replace(at, 6, std::to_string(dist.rank));
}

// Writes `text` to `path`; says so on stderr and returns false when it cannot.
bool write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (out) return true;
  std::cerr << "odbatch run: cannot write " << path.string() << '\n';
  return false;
}

// The round collective with the fault ODBATCH_FAULT names for this rank, if any (`odbatch stress`
// sets it; docs/distributed.md); empty, the pipeline's own. Throws std::invalid_argument naming
// the variable when it is malformed.
CollectiveFactory collective_with_fault_from_env(const DistEnv& dist) {
  const char* specs = std::getenv("ODBATCH_FAULT");
  if (!specs) return nullptr;
  try {
    if (const auto fault = fault_for_rank(specs, dist.rank))
      return round_collective_with_fault(*fault);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("ODBATCH_FAULT: ") + e.what());
  }
  return nullptr;
}

}  // namespace

int run_pipeline_command(const RunOptions& options) {
  std::unique_ptr<Pipeline> pipeline;
  std::optional<std::uint64_t> resumed_epoch;
  std::optional<std::filesystem::path> json_path;
  std::optional<std::filesystem::path> stats_json_path;
  try {
    const DistEnv dist = DistEnv::from_env();
    PipelineOptions pipeline_options;
    pipeline_options.collective = collective_with_fault_from_env(dist);
    if (options.ledger) pipeline_options.ledger = rank_path(*options.ledger, dist, "--ledger");
    if (options.json) json_path = rank_path(*options.json, dist, "--json");
    if (options.stats_json) stats_json_path = rank_path(*options.stats_json, dist, "--stats-json");
    auto config = PipelineConfig::from_toml_file(options.config);
    if (options.resume) {
      const auto checkpoint = read_checkpoint_file(*options.resume);
      pipeline = Pipeline::resume(std::move(config), dist, checkpoint, pipeline_options);
      resumed_epoch = checkpoint.epoch;
    } else {
      pipeline = std::make_unique<Pipeline>(std::move(config), dist, pipeline_options);
    }
  } catch (const ConfigFileError& e) {
    std::cerr << "odbatch run: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "odbatch run: " << e.what() << '\n';
    return 2;
  }
  const auto start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  std::uint64_t steps = 0;
  try {
    const auto at_max_steps = [&] { return options.max_steps && steps == *options.max_steps; };
    const auto at_save = [&] { return options.save_state && steps == options.save_state->steps; };
    const auto first = resumed_epoch.value_or(options.first_epoch);
    for (std::uint64_t e = first; e < first + options.epochs; ++e) {
      auto before_epoch = pipeline->stats();
      if (!(resumed_epoch && e == first)) pipeline->start_epoch(e);
      std::optional<ProgressLine> progress;
      if (options.progress)
        progress.emplace(*pipeline, e, pipeline->shard_records(), std::move(before_epoch));
      while (!at_max_steps() && !at_save() && pipeline->next_batch()) ++steps;
      if (at_save()) {
        const auto part = pipeline->state();
        save_checkpoint(options.save_state->file, part, pipeline->config().flow.round_timeout);
        std::cerr << "odbatch run: rank " << part.ranks.front().rank << " saved its state after "
                  << steps << " steps"
                  << (part.ranks.front().rank == 0
                          ? "; " + options.save_state->file.string() + " holds every rank's"
                          : std::string())
                  << '\n';
      }
      if (at_max_steps() || at_save()) {
        pipeline->depart();
        break;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "odbatch run: pipeline failed: " << e.what() << '\n';
    return 1;
  }
  const auto summary = summary_json(pipeline->stats(), steps, seconds_since(start),
                                    process_cpu_seconds() - cpu_start);
  print_summary(summary);
  bool written = true;
  if (json_path) written = write_text(*json_path, to_readable_json(summary));
  if (stats_json_path)
    written = write_text(*stats_json_path, pipeline->stats_json() + '\n') && written;
  return written ? 0 : 1;
}

}  // namespace odbatch::cli
