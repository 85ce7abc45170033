#include "model_scenario.hpp"

#include <charconv>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace odbatch::model {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

class LineParser {
 public:
  explicit LineParser(std::string location) : location_(std::move(location)) {}

  [[noreturn]] void fail(const std::string& reason) const {
    throw std::runtime_error(location_ + ": " + reason);
  }

  std::uint64_t number(std::string_view text, std::string_view what) const {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || text.empty())
      fail(std::string(what) + " \"" + std::string(text) + "\" is not a non-negative integer");
    return value;
  }

  std::uint32_t number_within(std::string_view text, std::string_view what, std::uint64_t lo,
                              std::uint64_t hi) const {
    const auto value = number(text, what);
    if (value < lo || value > hi)
      fail(std::string(what) + " " + std::to_string(value) + " is not within " +
           std::to_string(lo) + ".." + std::to_string(hi));
    return static_cast<std::uint32_t>(value);
  }

  const std::string& location() const { return location_; }

 private:
  std::string location_;
};

ModelScenario parse_line(const std::vector<std::string>& fields, const LineParser& p) {
  if (fields.size() != 8)
    p.fail(
        "expected 8 fields (name budget window max_defer hold_pct shards steps_per_round "
        "deferred_per_round), found " +
        std::to_string(fields.size()));
  ModelScenario s;
  s.name = fields[0];
  s.location = p.location();
  s.budget = p.number_within(fields[1], "budget", 1, 255);
  s.window = p.number_within(fields[2], "window", 1, 255);
  s.max_defer = p.number_within(fields[3], "max_defer", 0, 255);
  s.hold_pct = p.number_within(fields[4], "hold_pct", 1, 100);

  std::size_t samples = 0;
  for (const auto shard : split(fields[5], '/')) {
    auto& costs = s.shards.emplace_back();
    if (shard == "-") continue;
    for (const auto cost : split(shard, ','))
      costs.push_back(p.number_within(cost, "rank " + std::to_string(s.shards.size() - 1) + " cost",
                                      1, s.budget));
    samples += costs.size();
  }
  if (s.shards.size() < kMinModelRanks || s.shards.size() > kMaxModelRanks)
    p.fail(std::to_string(s.shards.size()) + " shards; the model takes " +
           std::to_string(kMinModelRanks) + ".." + std::to_string(kMaxModelRanks) + " ranks");
  if (samples == 0 || samples > kMaxModelSamples)
    p.fail(std::to_string(samples) + " samples; the model takes 1.." +
           std::to_string(kMaxModelSamples));

  for (const auto t : split(fields[6], ','))
    s.steps_per_round.push_back(p.number_within(t, "steps_per_round entry", 0, 255));
  for (const auto d : split(fields[7], ','))
    s.deferred_per_round.push_back(p.number_within(d, "deferred_per_round entry", 0, samples));
  if (s.deferred_per_round.size() != s.steps_per_round.size())
    p.fail(std::to_string(s.steps_per_round.size()) + " step counts but " +
           std::to_string(s.deferred_per_round.size()) + " deferred counts");
  if (s.steps_per_round.back() != 0) p.fail("the last round (every rank DONE) must have 0 steps");
  return s;
}

}  // namespace

std::uint64_t ModelScenario::total_steps() const {
  return std::accumulate(steps_per_round.begin(), steps_per_round.end(), std::uint64_t{0});
}

std::vector<ModelScenario> parse_model_scenarios(std::istream& in, const std::string& source) {
  std::vector<ModelScenario> scenarios;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.empty() || fields[0].starts_with('#')) continue;
    const LineParser parser(source + ":" + std::to_string(number));
    for (const auto& earlier : scenarios)
      if (earlier.name == fields[0])
        parser.fail("scenario " + fields[0] + " is already defined at " + earlier.location);
    scenarios.push_back(parse_line(fields, parser));
  }
  return scenarios;
}

std::vector<ModelScenario> load_model_scenarios(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be opened");
  return parse_model_scenarios(in, path);
}

LockstepScenario lockstep_scenario(const ModelScenario& scenario, std::uint32_t tokens_per_cost,
                                   std::uint64_t seed) {
  LockstepScenario s;
  auto& c = s.config;
  c.policy = Policy::balanced;
  c.budget_mode = BudgetMode::padded;
  c.warmup = Warmup::none;
  c.token_budget = scenario.budget * tokens_per_cost;
  c.max_seq_len = c.token_budget;
  c.window = scenario.window;
  c.max_defer_rounds = scenario.max_defer;
  c.hold_pct = scenario.hold_pct;
  c.seed = seed;
  SampleId id = 0;
  for (const auto& costs : scenario.shards) {
    auto& shard = s.shards.emplace_back();
    for (const auto cost : costs) {
      const std::uint32_t tokens = cost * tokens_per_cost;
      shard.push_back({id++, tokens, tokens, 0});
    }
  }
  return s;
}

}  // namespace odbatch::model
