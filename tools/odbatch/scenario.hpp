#pragma once
// A plan scenario as read from JSON (docs/plan-json.md): one round of proposals, or a whole
// epoch of per-rank shards.
#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch::cli {

struct RoundScenario {
  std::uint64_t epoch = 0;
  std::uint64_t round = 0;
  std::uint64_t prev_digest = 0;
  // Rank r's proposal; fingerprints are filled in once the configuration is final.
  std::vector<Proposal> proposals;
  std::vector<std::vector<SampleId>> window_ids;  // per rank, in window order
};

struct EpochScenario {
  std::uint64_t epoch = 0;
  std::vector<std::vector<SampleCost>> shards;  // per rank, in shard order
};

struct Scenario {
  std::string description;  // optional free text, echoed in the report
  BatchingConfig config;    // built-in defaults overlaid with the scenario's "config" object
  std::variant<RoundScenario, EpochScenario> body;
};

// Reads and checks a scenario file. Throws InputError naming the file and the offending value's
// path, e.g. "s.json: ranks[2].samples[5].tokens: expected a positive integer, got 0".
Scenario read_scenario(const std::filesystem::path& file);

}  // namespace odbatch::cli
