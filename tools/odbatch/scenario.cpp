#include "scenario.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <map>

#include "json_input.hpp"
#include "odbatch/config/batching_settings.hpp"

namespace odbatch::cli {
namespace {

using nlohmann::json;
constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

SettingValue setting_value(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_string()) return value.get<std::string>();
  return OtherKindValue{describe(value)};
}

// The "config" object: the same keys and checks as a TOML [batching] table.
BatchingConfig read_config(const JsonReader& reader, const json& document) {
  BatchingConfig config;
  const json* object = optional_member(document, "config");
  if (!object) return config;
  if (!object->is_object()) reader.fail("config", "expected an object, got " + describe(*object));
  for (const auto& [key, value] : object->items()) {
    try {
      set_batching_setting(config, key, setting_value(value));
    } catch (const SettingError& e) {
      reader.fail(member_path("config", key), e.what());
    }
  }
  try {
    validate(config);
  } catch (const ConfigError& e) {
    reader.fail(member_path("config", e.field()),
                std::string(e.what()).substr(e.field().size() + 2));
  }
  return config;
}

std::uint64_t optional_unsigned(const JsonReader& reader, const json& object, std::string_view key,
                                std::string_view path, std::uint64_t fallback,
                                std::uint64_t maximum = std::numeric_limits<std::uint64_t>::max()) {
  const json* value = optional_member(object, key);
  return value ? reader.to_unsigned(*value, member_path(path, key), 0, maximum) : fallback;
}

// A digest as the report prints it ("0x" and hex digits) or as an integer.
std::uint64_t read_digest(const JsonReader& reader, const json& value, std::string_view path) {
  if (!value.is_string()) return reader.to_unsigned(value, path);
  const std::string text = value.get<std::string>();
  std::uint64_t digest = 0;
  const char* first = text.data() + 2;
  const char* last = text.data() + text.size();
  const bool prefixed = text.starts_with("0x") && text.size() > 2 && text.size() <= 18;
  if (!prefixed || std::from_chars(first, last, digest, 16).ptr != last)
    reader.fail(path, "expected an integer or a hex string like \"0x1f\", got " + describe(value));
  return digest;
}

// Labels assumed for a sample given only as a token count: half its tokens, rounded up, so it is
// never label-free.
std::uint32_t default_labels(std::uint32_t tokens) {
  return tokens / 2 + tokens % 2;
}

struct SampleSyntax {
  bool age_allowed = false;          // window samples have an age; shard samples do not
  std::uint64_t minimum_tokens = 0;  // window samples passed admission, so they have tokens
};

struct ScenarioSample {
  SampleCost cost;
  std::uint32_t age = 0;
};

// One sample: an object, or a bare token count.
ScenarioSample read_sample(const JsonReader& reader, const json& value, std::string_view path,
                           SampleId default_id, const SampleSyntax& syntax) {
  ScenarioSample read;
  SampleCost& sample = read.cost;
  sample.id = default_id;
  if (value.is_number()) {
    sample.tokens =
        static_cast<std::uint32_t>(reader.to_unsigned(value, path, syntax.minimum_tokens, kMaxU32));
    sample.labels = default_labels(sample.tokens);
    return read;
  }
  if (syntax.age_allowed)
    reader.expect_object(value, path, {"id", "tokens", "labels", "patches", "age"});
  else
    reader.expect_object(value, path, {"id", "tokens", "labels", "patches"});
  sample.id = optional_unsigned(reader, value, "id", path, default_id);
  sample.tokens = static_cast<std::uint32_t>(
      reader.to_unsigned(reader.required(value, "tokens", path), member_path(path, "tokens"),
                         syntax.minimum_tokens, kMaxU32));
  sample.labels = static_cast<std::uint32_t>(
      optional_unsigned(reader, value, "labels", path, default_labels(sample.tokens), kMaxU32));
  if (sample.labels > sample.tokens)
    reader.fail(member_path(path, "labels"), "expected at most tokens (" +
                                                 std::to_string(sample.tokens) + "), got " +
                                                 std::to_string(sample.labels));
  sample.patches =
      static_cast<std::uint32_t>(optional_unsigned(reader, value, "patches", path, 0, kMaxU32));
  read.age = static_cast<std::uint32_t>(optional_unsigned(reader, value, "age", path, 0, kMaxU32));
  return read;
}

// Ids must be unique across the scenario: the report and the audit identify samples by them.
class IdRegistry {
 public:
  void add(const JsonReader& reader, SampleId id, const std::string& path) {
    const auto [it, inserted] = paths_.emplace(id, path);
    if (!inserted) reader.fail(path, "id " + std::to_string(id) + " is also used by " + it->second);
  }

 private:
  std::map<SampleId, std::string> paths_;
};

RankState read_state(const JsonReader& reader, const json& value, std::string_view path) {
  const std::string name = reader.to_string(value, path);
  for (const auto state : {RankState::active, RankState::draining, RankState::done})
    if (name == to_string(state)) return state;
  reader.fail(path, "expected one of ACTIVE, DRAINING, DONE; got " + describe(value));
}

RoundScenario read_round(const JsonReader& reader, const json& document) {
  reader.expect_object(document, "",
                       {"kind", "description", "config", "epoch", "round", "prev_digest", "ranks"});
  RoundScenario round;
  round.epoch = optional_unsigned(reader, document, "epoch", "", 0);
  round.round = optional_unsigned(reader, document, "round", "", 0);
  if (const json* digest = optional_member(document, "prev_digest"))
    round.prev_digest = read_digest(reader, *digest, "prev_digest");
  const json& ranks = reader.required(document, "ranks", "");
  reader.expect_array(ranks, "ranks");
  if (ranks.empty()) reader.fail("ranks", "expected at least one rank");

  IdRegistry ids;
  SampleId running_id = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string rank_path = element_path("ranks", r);
    const json& rank = ranks[r];
    reader.expect_object(rank, rank_path, {"state", "entered", "samples"});
    Proposal proposal;
    proposal.epoch = round.epoch;
    proposal.round = round.round;
    proposal.prev_digest = round.prev_digest;
    proposal.state = read_state(reader, reader.required(rank, "state", rank_path),
                                member_path(rank_path, "state"));
    const std::string samples_path = member_path(rank_path, "samples");
    const json& samples = reader.required(rank, "samples", rank_path);
    reader.expect_array(samples, samples_path);
    std::vector<SampleId> window_ids;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const std::string path = element_path(samples_path, i);
      const auto [cost, age] = read_sample(reader, samples[i], path, running_id++,
                                           {.age_allowed = true, .minimum_tokens = 1});
      ids.add(reader, cost.id, path);
      window_ids.push_back(cost.id);
      proposal.samples.push_back({cost.tokens, cost.labels, cost.patches, age});
    }
    // By default every window sample entered this round (a first round).
    proposal.entered = static_cast<std::uint32_t>(
        optional_unsigned(reader, rank, "entered", rank_path, proposal.samples.size(), kMaxU32));
    round.proposals.push_back(std::move(proposal));
    round.window_ids.push_back(std::move(window_ids));
  }
  return round;
}

EpochScenario read_epoch(const JsonReader& reader, const json& document) {
  reader.expect_object(document, "", {"kind", "description", "config", "epoch", "shards"});
  EpochScenario epoch;
  epoch.epoch = optional_unsigned(reader, document, "epoch", "", 0);
  const json& shards = reader.required(document, "shards", "");
  reader.expect_array(shards, "shards");
  if (shards.empty()) reader.fail("shards", "expected at least one shard (one per rank)");

  IdRegistry ids;
  SampleId running_id = 0;
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const std::string shard_path = element_path("shards", r);
    reader.expect_array(shards[r], shard_path);
    std::vector<SampleCost> shard;
    for (std::size_t i = 0; i < shards[r].size(); ++i) {
      const std::string path = element_path(shard_path, i);
      // Zero-token samples are allowed here: the run rejects them with a reason, as a loader would.
      const SampleCost cost = read_sample(reader, shards[r][i], path, running_id++, {}).cost;
      ids.add(reader, cost.id, path);
      shard.push_back(cost);
    }
    epoch.shards.push_back(std::move(shard));
  }
  return epoch;
}

}  // namespace

Scenario read_scenario(const std::filesystem::path& file) {
  const json document = read_json_file(file);
  const JsonReader reader(file.string());
  if (!document.is_object()) reader.fail("", "expected an object, got " + describe(document));
  Scenario scenario;
  const json& kind_value = reader.required(document, "kind", "");
  const std::string kind = reader.to_string(kind_value, "kind");
  if (const json* description = optional_member(document, "description"))
    scenario.description = reader.to_string(*description, "description");
  scenario.config = read_config(reader, document);
  if (kind == "round")
    scenario.body = read_round(reader, document);
  else if (kind == "epoch")
    scenario.body = read_epoch(reader, document);
  else
    reader.fail("kind", "expected \"round\" or \"epoch\", got " + describe(kind_value));
  return scenario;
}

}  // namespace odbatch::cli
