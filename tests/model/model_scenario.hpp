#pragma once
// The scenarios of model/scenarios.txt, shared by the spin model and the C++ core: small shards of
// abstract sample costs, and the outcomes both must produce.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "odbatch/core/lockstep.hpp"

namespace odbatch::model {

struct ModelScenario {
  std::string name;
  std::string location;  // file:line, for messages
  std::uint32_t budget = 0;
  std::uint32_t window = 0;
  std::uint32_t max_defer = 0;
  std::uint32_t hold_pct = 0;
  std::vector<std::vector<std::uint32_t>> shards;  // abstract costs per rank, in shard order
  std::vector<std::uint32_t> steps_per_round;      // T of every round, the final all-DONE one too
  std::vector<std::uint64_t> deferred_per_round;   // samples deferred in each round, all ranks

  std::uint64_t total_steps() const;
};

// The bounds of the Promela model (W and sample ids as mask bits), checked on every scenario.
inline constexpr std::size_t kMinModelRanks = 2;
inline constexpr std::size_t kMaxModelRanks = 4;
inline constexpr std::size_t kMaxModelSamples = 30;

// An abstract cost unit in tokens: the core sees cost * kTokensPerCost tokens and a budget of
// budget * kTokensPerCost. Every rule of the `balanced` padded plan compares products and sums of
// lengths, so scaling all lengths by one factor leaves every decision unchanged.
inline constexpr std::uint32_t kTokensPerCost = 256;

// Parses scenarios.txt; throws std::runtime_error naming `source`:line and the reason.
std::vector<ModelScenario> parse_model_scenarios(std::istream& in, const std::string& source);
std::vector<ModelScenario> load_model_scenarios(const std::string& path);

// The scenario as the core runs it: policy balanced, padded budget, no warm-up, every label
// supervised, sample ids numbered across shards from 0 as in the model.
LockstepScenario lockstep_scenario(const ModelScenario& scenario, std::uint32_t tokens_per_cost,
                                   std::uint64_t seed);

}  // namespace odbatch::model
