#include "odbatch/sim/step_cost_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace odbatch {
namespace {

// Every figure is stated in docs/simulation.md with its source or reasoning.
PlatformSpec h20_node() {
  PlatformSpec p;
  p.name = "8 x H20 per node";
  p.peak_flops = 148e12;
  p.mfu = 0.40;
  p.hbm_bytes_per_second = 4.0e12;
  p.intra_node_bus_bytes_per_second = 300e9;
  p.inter_node_bytes_per_second = 200e9 / 8;  // 200 Gb/s per node
  p.seconds_per_layer_pass = 100 * 20e-6;     // ~100 kernels forward + backward, 20 us each
  p.framework_seconds = 0.05;
  p.gradient_bytes_per_parameter = 2;    // bf16 gradients
  p.optimizer_bytes_per_parameter = 32;  // Adam with fp32 master weights: reads and writes
  return p;
}

ModelSpec model_2b() {
  return {"2b", 1.7e9, 0.4e9, 28, 2048, 24};
}
ModelSpec model_8b() {
  return {"8b", 8.2e9, 0.58e9, 36, 4096, 27};
}

double real(std::uint64_t v) {
  return static_cast<double>(v);
}

}  // namespace

StepCostModel derive_cost_model(const ModelSpec& model, const PlatformSpec& platform) {
  const double flops = platform.mfu * platform.peak_flops;
  StepCostModel m;
  m.name = model.name;
  m.fixed_seconds = (model.layers + model.vision_layers) * platform.seconds_per_layer_pass +
                    platform.framework_seconds;
  m.seconds_per_token = 6 * model.language_parameters / flops;
  m.seconds_per_attention = 6.0 * model.layers * model.hidden / flops;
  m.seconds_per_patch = 6 * model.vision_parameters / flops;
  m.gradient_bytes = model.parameters() * platform.gradient_bytes_per_parameter;
  m.intra_node_bus_bytes_per_second = platform.intra_node_bus_bytes_per_second;
  m.inter_node_bytes_per_second = platform.inter_node_bytes_per_second;
  m.unsharded_optimizer_seconds =
      model.parameters() * platform.optimizer_bytes_per_parameter / platform.hbm_bytes_per_second;
  return m;
}

ModelSpec preset_model(std::string_view name) {
  if (name == "2b") return model_2b();
  if (name == "8b") return model_8b();
  throw std::invalid_argument("unknown cost model preset " + std::string(name));
}

PlatformSpec preset_platform() {
  return h20_node();
}

std::optional<StepCostModel> cost_model_preset(std::string_view name) {
  if (name != "2b" && name != "8b") return std::nullopt;
  return derive_cost_model(preset_model(name), preset_platform());
}

std::vector<std::string> cost_model_preset_names() {
  return {"2b", "8b"};
}

RankWork idle_work() {
  return {1, 2, 2, 4, 0};
}

RankWork group_work(std::span<const SampleCost> group) {
  RankWork w;
  w.rows = static_cast<std::uint32_t>(group.size());
  for (const auto& s : group) {
    w.max_tokens = std::max(w.max_tokens, s.tokens);
    w.sum_tokens += s.tokens;
    w.sum_squared_tokens += std::uint64_t{s.tokens} * s.tokens;
    w.patches += s.patches;
  }
  return w;
}

double rank_seconds(const StepCostModel& model, const RankWork& work, BudgetMode layout) {
  const double longest = work.max_tokens;
  const double tokens = layout == BudgetMode::padded ? work.rows * longest : real(work.sum_tokens);
  const double attention =
      layout == BudgetMode::padded ? work.rows * longest * longest : real(work.sum_squared_tokens);
  return model.fixed_seconds + model.seconds_per_token * tokens +
         model.seconds_per_attention * attention + model.seconds_per_patch * real(work.patches);
}

double allreduce_seconds(const StepCostModel& model, const ClusterShape& cluster) {
  double seconds = 0;
  const double per_node = cluster.ranks_per_node, nodes = cluster.nodes;
  if (cluster.ranks_per_node > 1)
    seconds += 2 * (per_node - 1) / per_node * model.gradient_bytes /
               model.intra_node_bus_bytes_per_second;
  if (cluster.nodes > 1)
    seconds += 2 * (nodes - 1) / nodes * model.gradient_bytes / model.inter_node_bytes_per_second;
  return seconds;
}

double optimizer_seconds(const StepCostModel& model, const ClusterShape& cluster) {
  return model.unsharded_optimizer_seconds / std::max(cluster.world(), 1u);
}

StepCostModel calibrate(StepCostModel model, const CalibrationPoint& first,
                        const CalibrationPoint& second, std::span<const SampleCost> samples,
                        const ClusterShape& cluster) {
  if (samples.empty()) throw std::invalid_argument("calibration needs the workload's samples");
  if (first.samples_per_step == second.samples_per_step)
    throw std::invalid_argument("calibration points need different samples per step");
  double tokens = 0, squares = 0, patches = 0;
  for (const auto& s : samples) {
    tokens += s.tokens;
    squares += static_cast<double>(s.tokens) * s.tokens;
    patches += s.patches;
  }
  const double n = real(samples.size());
  const double slope = (second.step_seconds - first.step_seconds) /
                       (second.samples_per_step - first.samples_per_step);
  const double per_token =
      (slope - model.seconds_per_attention * squares / n - model.seconds_per_patch * patches / n) /
      (tokens / n);
  const double fixed = first.step_seconds - first.samples_per_step * slope -
                       allreduce_seconds(model, cluster) - optimizer_seconds(model, cluster);
  if (!(per_token > 0))
    throw std::invalid_argument(
        "calibration: the points leave no positive time per token once attention and patches "
        "are accounted for");
  if (!(fixed >= 0))
    throw std::invalid_argument(
        "calibration: the points leave a negative fixed time per step once communication and "
        "the optimizer are accounted for");
  model.seconds_per_token = per_token;
  model.fixed_seconds = fixed;
  model.name += " calibrated";
  return model;
}

}  // namespace odbatch
