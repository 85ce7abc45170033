// A complete data-parallel training loop on CPU that embeds odbatch: each rank (one process,
// started by `odbatch launch` or torchrun; alone without them) trains a small next-token model on
// its pipeline's batches, allreduces the gradient every step and applies SGD.
//
//   odbatch launch --nproc 2 -- build/examples/cpp_trainer/odbatch_cpp_trainer
//   examples/pipeline.toml
//
// How it uses the pipeline: the rank's mean loss is multiplied by StepInfo::loss_scale and the
// gradients are averaged over the ranks (sum / W, as DDP does), so every step descends the mean
// loss over all the step's targets of all ranks; IDLE batches are trained like any other with
// weight 0, so every rank joins every allreduce; progress is StepInfo::global_samples_consumed
// (the sum of every step's samples_this_step). --save-state-at N --state F saves the loader's
// checkpoint (every rank's part, joined) and the model at step N and stops; --resume F goes on
// from there with the very batches and losses of an uninterrupted run.
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "next_token_model.hpp"
#include "odbatch/checkpoint.hpp"
#include "odbatch/dist_env.hpp"
#include "odbatch/pipeline.hpp"
#include "odbatch/pipeline_config.hpp"
#include "odbatch/trainer_allreduce.hpp"
#include "odbatch/version.hpp"

namespace {

struct TrainerOptions {
  std::string config;
  std::uint64_t epochs = 1;
  std::optional<std::uint64_t> max_steps;
  std::uint32_t dim = 32;
  std::uint32_t classes = 512;
  float learning_rate = 2.0f;
  std::uint64_t log_every = 20;
  std::optional<std::uint64_t> save_state_at;  // steps in all
  std::string state_file;                      // written at save_state_at; read by resume
  bool resume = false;
};

template <typename T>
T parse_number(std::string_view flag, std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    throw std::invalid_argument(std::string(flag) + ": not a number: " + std::string(text));
  return value;
}

TrainerOptions parse_options(int argc, char** argv) {
  TrainerOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) {
      if (!options.config.empty()) throw std::invalid_argument("one PIPELINE.toml only");
      options.config = arg;
      continue;
    }
    if (i + 1 == argc) throw std::invalid_argument(std::string(arg) + " needs a value");
    const std::string_view value = argv[++i];
    if (arg == "--epochs")
      options.epochs = parse_number<std::uint64_t>(arg, value);
    else if (arg == "--max-steps")
      options.max_steps = parse_number<std::uint64_t>(arg, value);
    else if (arg == "--dim")
      options.dim = parse_number<std::uint32_t>(arg, value);
    else if (arg == "--classes")
      options.classes = parse_number<std::uint32_t>(arg, value);
    else if (arg == "--lr")
      options.learning_rate = parse_number<float>(arg, value);
    else if (arg == "--log-every")
      options.log_every = parse_number<std::uint64_t>(arg, value);
    else if (arg == "--save-state-at")
      options.save_state_at = parse_number<std::uint64_t>(arg, value);
    else if (arg == "--state")
      options.state_file = value;
    else if (arg == "--resume") {
      options.state_file = value;
      options.resume = true;
    } else
      throw std::invalid_argument("unknown option " + std::string(arg));
  }
  if (options.config.empty()) throw std::invalid_argument("PIPELINE.toml is required");
  if (options.log_every == 0) throw std::invalid_argument("--log-every must be positive");
  if (options.save_state_at && (options.state_file.empty() || options.resume))
    throw std::invalid_argument("--save-state-at needs --state FILE (and no --resume)");
  if (!options.save_state_at && !options.resume && !options.state_file.empty())
    throw std::invalid_argument("--state goes with --save-state-at");
  return options;
}

int train(const TrainerOptions& options) {
  if (odbatch::library_version() != odbatch::kHeaderVersion)
    throw std::runtime_error("built against odbatch " + std::string(odbatch::kHeaderVersion) +
                             " but running with " + std::string(odbatch::library_version()));
  const auto dist = odbatch::DistEnv::from_env();
  odbatch::PipelineOptions pipeline_options;
  pipeline_options.on_abort = [rank = dist.rank](const std::string& reason) {
    std::cerr << "rank " << rank << ": the loader aborted: " << reason << '\n';
  };
  auto config = odbatch::PipelineConfig::from_toml_file(options.config);
  // A resumed run goes on in the checkpoint's epoch, at its step, with the model saved with it.
  std::optional<odbatch::Checkpoint> checkpoint;
  std::unique_ptr<odbatch::Pipeline> loader;
  if (options.resume) {
    checkpoint = odbatch::read_checkpoint_file(options.state_file);
    loader = odbatch::Pipeline::resume(std::move(config), dist, *checkpoint, pipeline_options);
  } else {
    loader = std::make_unique<odbatch::Pipeline>(std::move(config), dist, pipeline_options);
  }
  auto& pipeline = *loader;
  odbatch::TrainerAllreduce allreduce(dist);
  const bool reports = dist.rank == 0;
  const auto world = static_cast<float>(dist.world_size);

  // Every rank starts from the same parameters, as a trainer broadcasting rank 0's would.
  odbatch_example::NextTokenModel model({pipeline.vocab_size(), options.dim, options.classes},
                                        /*seed=*/1);
  if (checkpoint) model.load(options.state_file + ".model");
  std::vector<float> gradient(model.parameter_count());
  if (reports)
    std::cout << "odbatch " << odbatch::library_version() << ": " << dist.world_size << " rank(s), "
              << pipeline.dataset_records() << " records, model of " << model.parameter_count()
              << " parameters\n";

  std::uint64_t steps = 0;
  const std::uint64_t first_epoch = checkpoint ? checkpoint->epoch : 0;
  for (std::uint64_t epoch = first_epoch; epoch < options.epochs; ++epoch) {
    if (!(checkpoint && epoch == first_epoch)) pipeline.start_epoch(epoch);
    std::uint64_t epoch_steps = 0, idle_steps = 0;
    // Summed loss and targets over all ranks: since the last log line, and over the epoch.
    double interval[2] = {0.0, 0.0}, whole_epoch[2] = {0.0, 0.0};
    while (!(options.max_steps && steps == *options.max_steps)) {
      const auto batch = pipeline.next_batch();
      if (!batch) break;
      const auto& info = batch->step_info();
      const auto targets = odbatch_example::NextTokenModel::count_targets(*batch);
      if (!info.idle && targets != info.labels)
        throw std::runtime_error("step " + std::to_string(info.step) + ": the model sees " +
                                 std::to_string(targets) + " targets, the pipeline counts " +
                                 std::to_string(info.labels));
      // The rank's mean loss times its loss scale; an IDLE batch has loss scale 0.
      const float weight =
          targets ? static_cast<float>(info.loss_scale / static_cast<double>(targets)) : 0.0f;
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      const auto loss = model.accumulate(*batch, weight, gradient);
      allreduce.sum(gradient);
      for (auto& g : gradient) g /= world;
      model.sgd_step(gradient, options.learning_rate);

      double step_loss[2] = {info.idle ? 0.0 : loss.sum,
                             info.idle ? 0.0 : static_cast<double>(loss.targets)};
      allreduce.sum(std::span<double>(step_loss));
      for (int i = 0; i < 2; ++i) {
        interval[i] += step_loss[i];
        whole_epoch[i] += step_loss[i];
      }
      ++steps;
      ++epoch_steps;
      idle_steps += info.idle ? 1 : 0;
      if (options.save_state_at && steps == *options.save_state_at) {
        // Every rank's loader state, joined by rank 0, and the model (the same on every rank).
        odbatch::save_checkpoint(options.state_file, pipeline.state(), std::chrono::minutes(1));
        if (reports) model.save(options.state_file + ".model");
        std::cout << "rank " << dist.rank << ": saved at step " << info.step + 1 << " of epoch "
                  << epoch << '\n';
        pipeline.depart();
        return 0;
      }
      if (reports && (info.step + 1) % options.log_every == 0) {
        std::cout << "epoch " << epoch << " step " << info.step + 1 << " loss " << std::fixed
                  << std::setprecision(4) << interval[0] / std::max(interval[1], 1.0) << " samples "
                  << info.global_samples_consumed << '/' << pipeline.dataset_records() << '\n'
                  << std::flush;
        interval[0] = interval[1] = 0.0;
      }
    }
    std::cout << "rank " << dist.rank << ": epoch " << epoch << ": " << epoch_steps << " steps ("
              << idle_steps << " idle), mean loss " << std::fixed << std::setprecision(4)
              << whole_epoch[0] / std::max(whole_epoch[1], 1.0) << '\n';
    if (options.max_steps && steps == *options.max_steps) {
      pipeline.depart();
      break;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return train(parse_options(argc, argv));
  } catch (const std::invalid_argument& e) {
    std::cerr << "cpp trainer: " << e.what() << "\nusage: " << argv[0]
              << " PIPELINE.toml [--epochs N] [--max-steps N] [--dim D] [--classes C] [--lr X]"
                 " [--log-every N] [--save-state-at N --state FILE | --resume FILE]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cpp trainer: " << e.what() << '\n';
    return 1;
  }
}
