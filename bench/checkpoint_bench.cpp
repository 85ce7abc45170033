// The loader's checkpoint on the real dataset: how large each rank's part and the joined file are
// (bytes per window sample beyond a part's fixed fields, against the bound of 16 bytes per window
// sample plus 4 KiB per rank), how long state() takes, and how long a resume takes to its first
// batch against a fresh epoch's first batch, measured in the same run. Ranks are threads of one
// process (the in-process collective).
//   odbatch_bench_checkpoint [--config C.toml] [--steps N] [--world W]... [--out F.json]
#include <chrono>
#include <exception>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.hpp"
#include "bench_timing.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"

namespace odbatch::bench {
namespace {

struct Options {
  std::string config = std::string(ODBATCH_SOURCE_DIR) + "/examples/pipeline.toml";
  std::uint64_t steps = 20;
  std::vector<std::uint32_t> worlds;
  std::string out_path;
};

// Runs `body(rank)` on every rank of a fresh in-process group and waits; rethrows the first error.
template <typename Body>
void on_every_rank(std::uint32_t world, Body body) {
  const auto group = InprocGroup::create(world);
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        body(DistEnv::inproc(group, rank, world), rank);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

Report measure(const PipelineConfig& config, std::uint32_t world, std::uint64_t steps) {
  std::vector<Checkpoint> parts(world);
  std::vector<double> state_seconds(world), fresh_first_batch(world), resumed_first_batch(world);
  on_every_rank(world, [&](DistEnv dist, std::uint32_t rank) {
    Pipeline pipeline(config, std::move(dist));
    const auto start = Clock::now();
    pipeline.start_epoch(0);
    if (!pipeline.next_batch()) throw std::runtime_error("the epoch has no batch");
    fresh_first_batch[rank] = seconds_since(start);
    for (std::uint64_t i = 1; i < steps; ++i)
      if (!pipeline.next_batch()) throw std::runtime_error("the epoch ended before --steps");
    const auto before_state = Clock::now();
    parts[rank] = pipeline.state();
    state_seconds[rank] = seconds_since(before_state);
    pipeline.depart();
  });
  const auto checkpoint = join_checkpoint_parts(parts);
  on_every_rank(world, [&](DistEnv dist, std::uint32_t rank) {
    const auto start = Clock::now();
    const auto pipeline = Pipeline::resume(config, std::move(dist), checkpoint);
    if (!pipeline->next_batch()) throw std::runtime_error("the resumed epoch has no batch");
    resumed_first_batch[rank] = seconds_since(start);
  });

  Report ranks = Report::array();
  double worst_per_sample = 0.0;
  std::size_t largest_fixed = 0;
  for (std::uint32_t rank = 0; rank < world; ++rank) {
    const auto size = encode_checkpoint(parts[rank]).size();
    auto fixed_only = parts[rank];
    fixed_only.ranks.front().window.clear();
    const auto fixed = encode_checkpoint(fixed_only).size();
    const auto window = parts[rank].ranks.front().window.size();
    const double per_sample =
        window ? static_cast<double>(size - fixed) / static_cast<double>(window) : 0.0;
    worst_per_sample = std::max(worst_per_sample, per_sample);
    largest_fixed = std::max(largest_fixed, fixed);
    ranks.push_back({{"rank", rank},
                     {"part_bytes", size},
                     {"fixed_bytes", fixed},
                     {"window_samples", window},
                     {"bytes_per_window_sample", rounded(per_sample, 2)},
                     {"state_ms", rounded(state_seconds[rank] * 1e3, 3)},
                     {"fresh_first_batch_s", rounded(fresh_first_batch[rank], 3)},
                     {"resumed_first_batch_s", rounded(resumed_first_batch[rank], 3)}});
  }
  const auto joined = encode_checkpoint(checkpoint).size();
  std::uint64_t window_total = 0;
  for (const auto& rank : checkpoint.ranks) window_total += rank.window.size();
  const double bound = 16.0 * static_cast<double>(window_total) + 4096.0 * world;
  return {{"world_size", world},
          {"steps_taken", checkpoint.steps_taken},
          {"round", checkpoint.ranks.front().round},
          {"joined_bytes", joined},
          {"window_samples", window_total},
          {"bound_bytes", bound},
          {"within_bound", static_cast<double>(joined) <= bound},
          {"worst_bytes_per_window_sample", rounded(worst_per_sample, 2)},
          {"largest_fixed_bytes", largest_fixed},
          {"ranks", std::move(ranks)}};
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  using namespace odbatch::bench;
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--config")
      options.config = value;
    else if (flag == "--steps")
      options.steps = std::stoull(value);
    else if (flag == "--world")
      options.worlds.push_back(static_cast<std::uint32_t>(std::stoul(value)));
    else if (flag == "--out")
      options.out_path = value;
    else {
      std::cerr << "usage: " << argv[0]
                << " [--config C.toml] [--steps N] [--world W]... [--out F.json]\n";
      return 2;
    }
  }
  if (options.worlds.empty()) options.worlds = {1, 4};
  try {
    const auto config = odbatch::PipelineConfig::from_toml_file(options.config);
    Report runs = Report::array();
    for (const auto world : options.worlds) runs.push_back(measure(config, world, options.steps));
    Report report{
        {"benchmark", "checkpoint"}, {"config", options.config}, {"runs", std::move(runs)}};
    emit_report(report, options.out_path);
  } catch (const std::exception& e) {
    std::cerr << "checkpoint bench: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
