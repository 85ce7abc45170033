#pragma once
// The simulated duration of one data-parallel training step (docs/simulation.md). Rank r takes
//   t_r = t0 + a * tokens + b * attention + c * patches
// where, for its group g, tokens = |g| * max L and attention = |g| * (max L)^2 in the padded
// layout, tokens = sum L and attention = sum L^2 in the packed (varlen) layout, and patches is the
// group's vision patches. The step takes max_r t_r, then the gradient all-reduce and the
// optimizer update, which do not overlap with compute in this model.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

struct ClusterShape {
  std::uint32_t nodes = 1;
  std::uint32_t ranks_per_node = 8;
  std::uint32_t world() const { return nodes * ranks_per_node; }
};

// The model being trained, as far as step time depends on it.
struct ModelSpec {
  std::string name;
  double language_parameters = 0;  // decoder: 6 FLOPs per parameter and token (forward + backward)
  double vision_parameters = 0;    // vision encoder: 6 FLOPs per parameter and patch
  std::uint32_t layers = 0;        // decoder layers
  std::uint32_t hidden = 0;        // decoder hidden size
  std::uint32_t vision_layers = 0;
  double parameters() const { return language_parameters + vision_parameters; }
};

// The GPUs, the network and the software's fixed cost per step.
struct PlatformSpec {
  std::string name;
  double peak_flops = 0;  // dense bf16, per GPU
  double mfu = 0;         // fraction of peak the token, attention and patch terms achieve
  double hbm_bytes_per_second = 0;
  double intra_node_bus_bytes_per_second = 0;  // all-reduce bus bandwidth inside a node
  double inter_node_bytes_per_second = 0;      // per node, all its network interfaces together
  double seconds_per_layer_pass = 0;         // kernel launches of one layer's forward and backward
  double framework_seconds = 0;              // per step: trainer loop, hooks, host-device copies
  double gradient_bytes_per_parameter = 0;   // all-reduced every step
  double optimizer_bytes_per_parameter = 0;  // memory traffic of the update, before sharding
};

struct StepCostModel {
  std::string name;
  double fixed_seconds = 0;          // t0
  double seconds_per_token = 0;      // a
  double seconds_per_attention = 0;  // b, per squared token
  double seconds_per_patch = 0;      // c
  double gradient_bytes = 0;
  double intra_node_bus_bytes_per_second = 0;
  double inter_node_bytes_per_second = 0;
  // The whole model's optimizer update on one GPU; ZeRO shards it over the ranks.
  double unsharded_optimizer_seconds = 0;
};

// a = 6 * language parameters / (mfu * peak); b = 6 * layers * hidden / (mfu * peak) (causal
// attention: QK^T and AV at half of 4 * L^2 * hidden FLOPs forward, times 3 with backward);
// c = 6 * vision parameters / (mfu * peak); t0 = (layers + vision layers) * seconds per layer
// pass + framework seconds; optimizer = parameters * optimizer bytes / HBM bandwidth.
StepCostModel derive_cost_model(const ModelSpec& model, const PlatformSpec& platform);

// The documented presets, fixed before any simulation: "2b" and "8b" (Qwen3-VL-sized models on
// H20-class GPUs, 8 per node). nullopt for another name.
std::optional<StepCostModel> cost_model_preset(std::string_view name);
std::vector<std::string> cost_model_preset_names();
ModelSpec preset_model(std::string_view name);  // throws std::invalid_argument for an unknown one
PlatformSpec preset_platform();

// What one rank computes in one step. An IDLE step is the two-token dummy batch.
struct RankWork {
  std::uint32_t rows = 0;
  std::uint32_t max_tokens = 0;
  std::uint64_t sum_tokens = 0;
  std::uint64_t sum_squared_tokens = 0;
  std::uint64_t patches = 0;
};
RankWork idle_work();
RankWork group_work(std::span<const SampleCost> group);

double rank_seconds(const StepCostModel& model, const RankWork& work, BudgetMode layout);

// Hierarchical ring all-reduce of the gradients: 2 (g - 1) / g * bytes over the intra-node bus
// (g ranks per node), then 2 (n - 1) / n * bytes over each node's network (n nodes). 0 for one
// rank.
double allreduce_seconds(const StepCostModel& model, const ClusterShape& cluster);
double optimizer_seconds(const StepCostModel& model, const ClusterShape& cluster);

// One measured step: per-rank samples and its duration.
struct CalibrationPoint {
  double samples_per_step = 0;
  double step_seconds = 0;
};

// Fits t0 and a so that a step of n samples of the workload's mean costs (mean L, mean L^2, mean
// patches) lasts what the two points measured: the slope per sample gives a once b and c are
// subtracted, the intercept gives t0 once communication and the optimizer are subtracted.
// Throws std::invalid_argument when the points do not determine a positive a and a t0 >= 0.
StepCostModel calibrate(StepCostModel model, const CalibrationPoint& first,
                        const CalibrationPoint& second, std::span<const SampleCost> samples,
                        const ClusterShape& cluster);

}  // namespace odbatch
