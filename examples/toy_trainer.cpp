// A toy data-parallel trainer: each rank (started by `odbatch launch` or torchrun) runs the
// pipeline on its shard and performs one allreduce per batch on a Gloo context of its own, as a
// real trainer's gradient allreduce would, then prints its step count. The pipeline keeps every
// rank's step count equal, so the allreduces pair up and none waits forever.
//
//   odbatch launch --nproc 3 -- build/examples/odbatch_toy_trainer examples/pipeline.toml
//
// With --max-steps N every rank stops after N steps, as a trainer with max_steps does, and
// departs: an agreed stop, not a failure, so no rank's abort hook fires.
//
// The "gradient" allreduced is the step's token count: its sum must equal the step's global
// token total that the pipeline reports, which the trainer checks.
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <span>
#include <string_view>

#include "odbatch/dist_env.hpp"
#include "odbatch/pipeline.hpp"
#include "odbatch/pipeline_config.hpp"
#include "odbatch/trainer_allreduce.hpp"

namespace {

int train(const char* config_file, std::optional<std::uint64_t> max_steps) {
  const auto dist = odbatch::DistEnv::from_env();
  odbatch::PipelineOptions options;
  // A real trainer would abort its communicator here (ncclCommAbort) to free its collectives.
  options.on_abort = [rank = dist.rank](const std::string& reason) {
    std::cerr << "rank " << rank << ": abort hook: " << reason << '\n';
  };
  // Rank 0's pipeline hosts the run's store at MASTER_ADDR, port MASTER_PORT + 1009 (a single
  // rank has none).
  odbatch::Pipeline pipeline(odbatch::PipelineConfig::from_toml_file(config_file), dist, options);
  // The trainer's own communicator, as a real trainer's gradient allreduce has.
  odbatch::TrainerAllreduce allreduce(dist);

  pipeline.start_epoch(0);
  std::uint64_t steps = 0, idle_steps = 0, tokens = 0;
  while (!(max_steps && steps == *max_steps)) {
    const auto batch = pipeline.next_batch();
    if (!batch) break;
    const auto& info = batch->step_info();
    double summed = static_cast<double>(info.tokens);
    allreduce.sum(std::span(&summed, 1));
    if (static_cast<std::uint64_t>(summed) != info.global.tokens) {
      std::cerr << "rank " << dist.rank << ": step " << info.step << ": allreduced " << summed
                << " tokens, the pipeline says " << info.global.tokens << '\n';
      return 1;
    }
    ++steps;
    idle_steps += info.idle ? 1 : 0;
    tokens += info.tokens;
  }
  if (max_steps && steps == *max_steps) pipeline.depart();
  std::cout << "rank " << dist.rank << ": " << steps << " steps (" << idle_steps << " idle), "
            << tokens << " tokens, one allreduce per step\n";
  return 0;
}

}  // namespace

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int main(int argc, char** argv) {
  std::optional<std::uint64_t> max_steps;
  if (argc == 4 && std::string_view(argv[2]) == "--max-steps") max_steps = parse_count(argv[3]);
  if (!(argc == 2 || (argc == 4 && max_steps))) {
    std::cerr << "usage: " << argv[0]
              << " PIPELINE.toml [--max-steps N]   (under odbatch launch or torchrun)\n";
    return 2;
  }
  try {
    return train(argv[1], max_steps);
  } catch (const std::exception& e) {
    std::cerr << "toy trainer: " << e.what() << '\n';
    return 1;
  }
}
