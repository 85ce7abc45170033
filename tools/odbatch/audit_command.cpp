#include "audit_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_input.hpp"
#include "json_output.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/hex_digest.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/metrics/ledger_writer.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/epoch_shard.hpp"

namespace odbatch::cli {
namespace {

constexpr std::string_view kNotChecked =
    "token budgets, per-step totals and loss scales (a ledger records sample ids only)";

// Findings printed per epoch; the JSON report holds every finding kept.
constexpr std::size_t kFindingsPrinted = 5;

// As many ranks as torchrun's environment may name (DistEnv::from_env); a larger world size in a
// header is corruption, not a run.
constexpr std::uint64_t kMaxWorldSize = std::uint64_t{1} << 20;

std::string_view split_name(ShardSplit split) {
  return split == ShardSplit::contiguous ? "contiguous" : "strided";
}

// One rank's epoch as one ledger file records it.
struct RankEpoch {
  std::string file;
  std::uint64_t header_line = 0;
  LedgerEpoch header;
  RankLedger ledger;                       // the steps carry sample ids only
  std::optional<std::uint64_t> end_steps;  // of the end line, or of the departed line
  bool departed = false;                   // the epoch's last line is a departure
  std::uint64_t end_line = 0;
  // A resumed epoch's ledger lists the steps from the checkpoint's on (its "resumed" line).
  std::uint64_t first_step = 0;

  std::uint32_t rank() const { return header.shard.rank; }
  std::string at(std::uint64_t line) const { return file + ":" + std::to_string(line); }
  // "rank 1 (r1.jsonl:1)", naming the epoch's header line.
  std::string name() const {
    return "rank " + std::to_string(rank()) + " (" + at(header_line) + ")";
  }
};

// Something the ledgers show to be wrong (exit status 1); unreadable ledgers are InputErrors.
struct Problem {
  std::string kind;
  std::string message;
};

// Everything the ledgers hold about one epoch.
struct EpochLedgers {
  std::vector<RankEpoch> ranks;   // in the order the files were given
  std::vector<Problem> problems;  // found while reading
};

using Epochs = std::map<std::uint64_t, EpochLedgers>;

// What the --config file says the ledgers must match.
struct ConfigDataset {
  std::string file;
  std::uint64_t record_count = 0;
  std::uint64_t fingerprint = 0;
  std::uint64_t seed = 0;
  bool shuffle = true;
  ShardSplit split = ShardSplit::contiguous;
  std::vector<MixedSource> mix;
};

// nlohmann's parse error without its "[json.exception...] parse error at ...: " prefix.
std::string parse_problem(const nlohmann::json::parse_error& e) {
  std::string_view message = e.what();
  if (const auto at = message.find("parse error"); at != std::string_view::npos)
    if (const auto colon = message.find(": ", at); colon != std::string_view::npos)
      message.remove_prefix(colon + 2);
  return std::string(message);
}

bool to_bool(const JsonReader& reader, const nlohmann::json& value, std::string_view path) {
  if (!value.is_boolean()) reader.fail(path, "expected true or false, got " + describe(value));
  return value.get<bool>();
}

std::uint64_t unsigned_member(const JsonReader& reader, const nlohmann::json& entry,
                              std::string_view key, std::uint64_t minimum = 0,
                              std::uint64_t maximum = std::numeric_limits<std::uint64_t>::max()) {
  return reader.to_unsigned(reader.required(entry, key, ""), key, minimum, maximum);
}

// Reads one ledger file into `epochs`. Throws InputError naming file:line for anything that is
// not a ledger line; records problems of content (restarts, step numbering, lines after the end).
class LedgerFileReader {
 public:
  LedgerFileReader(std::filesystem::path path, Epochs& epochs)
      : path_(std::move(path)), file_(path_.string()), epochs_(epochs) {}

  void read() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw InputError(file_ + ": cannot read: " + std::strerror(errno));
    if (std::filesystem::is_directory(path_))
      throw InputError(file_ + ": a directory, not a ledger file");
    std::string text;
    while (std::getline(in, text)) {
      ++line_;
      read_line(text);
    }
    if (in.bad()) throw InputError(file_ + ": read error after line " + std::to_string(line_));
    if (line_ == 0) throw InputError(file_ + ": empty; a ledger begins with an epoch line");
  }

 private:
  std::string here() const { return file_ + ":" + std::to_string(line_); }

  void read_line(const std::string& text) {
    const JsonReader reader(here());
    nlohmann::json entry;
    try {
      entry = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(here() +
                       ": malformed ledger line (truncated or corrupt): " + parse_problem(e));
    }
    if (!entry.is_object()) reader.fail("", "expected an object, got " + describe(entry));
    const std::string kind = reader.to_string(reader.required(entry, "kind", ""), "kind");
    if (kind == "epoch") return read_header(reader, entry);
    if (kind != "step" && kind != "rejected" && kind != "end" && kind != "departed" &&
        kind != "resumed")
      reader.fail("kind",
                  "expected epoch, resumed, step, rejected, end or departed, got \"" + kind + "\"");
    const std::uint64_t epoch = unsigned_member(reader, entry, "epoch");
    const auto open = open_.find(epoch);
    if (open == open_.end())
      reader.fail("epoch", "a " + kind + " line of epoch " + std::to_string(epoch) +
                               " before that epoch's header line");
    EpochLedgers& ledgers = epochs_[epoch];
    RankEpoch& section = ledgers.ranks[open->second];
    // The end line is written once the epoch's last step is prepared, which can be before the
    // trainer takes it: a departure at or before that step may follow it, and its steps count.
    if (kind == "departed" && section.end_steps && !section.departed && entry.contains("steps") &&
        entry["steps"].is_number_unsigned() &&
        entry["steps"].get<std::uint64_t>() <= *section.end_steps) {
      reader.expect_object(entry, "", {"kind", "epoch", "steps"});
      section.end_steps = entry["steps"].get<std::uint64_t>();
      section.departed = true;
      section.end_line = line_;
      return;
    }
    if (section.end_steps)
      ledgers.problems.push_back({"after_end", here() + ": a " + kind +
                                                   " line after the epoch's end line (" +
                                                   section.at(section.end_line) + ")"});
    if (kind == "resumed") {
      reader.expect_object(entry, "", {"kind", "epoch", "steps"});
      if (!section.ledger.steps.empty() || !section.ledger.rejected.empty() ||
          section.first_step != 0)
        reader.fail("kind", "a resumed line comes right after its epoch's header line");
      section.first_step = unsigned_member(reader, entry, "steps");
      return;
    }
    if (kind == "step") return read_step(reader, entry, ledgers, section);
    if (kind == "rejected") return read_rejection(reader, entry, section);
    reader.expect_object(entry, "", {"kind", "epoch", "steps"});
    section.end_steps = unsigned_member(reader, entry, "steps");
    section.departed = kind == "departed";
    section.end_line = line_;
  }

  // [[first id, records, epochs per pass], ...]: sources that follow each other and cover the
  // dataset's records.
  static std::vector<MixedSource> read_mix(const JsonReader& reader, const nlohmann::json& mix,
                                           const LedgerEpoch& h) {
    reader.expect_array(mix, "mix");
    std::vector<MixedSource> sources;
    for (std::size_t i = 0; i < mix.size(); ++i) {
      const std::string path = "mix[" + std::to_string(i) + "]";
      reader.expect_array(mix[i], path);
      if (mix[i].size() != 3) reader.fail(path, "expected [first id, records, epochs per pass]");
      MixedSource source{reader.to_unsigned(mix[i][0], path + "[0]"),
                         reader.to_unsigned(mix[i][1], path + "[1]"),
                         reader.to_unsigned(mix[i][2], path + "[2]", 1)};
      const SampleId next =
          sources.empty() ? 0 : sources.back().first_id + sources.back().record_count;
      if (source.first_id != next)
        reader.fail(path + "[0]", "expected " + std::to_string(next) +
                                      ", where the previous "
                                      "source ends");
      sources.push_back(source);
    }
    if (sources.empty() || sources.back().first_id + sources.back().record_count != h.record_count)
      reader.fail("mix", "the sources do not cover the " + std::to_string(h.record_count) +
                             " records of record_count");
    return sources;
  }

  void read_header(const JsonReader& reader, const nlohmann::json& entry) {
    reader.expect_object(entry, "",
                         {"kind", "epoch", "rank", "world_size", "record_count",
                          "dataset_fingerprint", "seed", "shuffle", "split", "mix", "settings"});
    RankEpoch section;
    section.file = file_;
    section.header_line = line_;
    LedgerEpoch& h = section.header;
    h.epoch = unsigned_member(reader, entry, "epoch");
    h.shard.epoch = h.epoch;
    h.shard.world_size =
        static_cast<std::uint32_t>(unsigned_member(reader, entry, "world_size", 1, kMaxWorldSize));
    h.shard.rank = static_cast<std::uint32_t>(
        unsigned_member(reader, entry, "rank", 0, h.shard.world_size - 1));
    h.record_count = unsigned_member(reader, entry, "record_count");
    const std::string fingerprint =
        reader.to_string(reader.required(entry, "dataset_fingerprint", ""), "dataset_fingerprint");
    const auto parsed = parse_hex_digest(fingerprint);
    if (!parsed)
      reader.fail("dataset_fingerprint",
                  "expected \"0x\" and 16 hex digits, got \"" + fingerprint + "\"");
    h.dataset_fingerprint = *parsed;
    h.shard.seed = unsigned_member(reader, entry, "seed");
    h.shard.shuffle = to_bool(reader, reader.required(entry, "shuffle", ""), "shuffle");
    const std::string split = reader.to_string(reader.required(entry, "split", ""), "split");
    if (split != "contiguous" && split != "strided")
      reader.fail("split", "expected contiguous or strided, got \"" + split + "\"");
    h.shard.split = split == "contiguous" ? ShardSplit::contiguous : ShardSplit::strided;
    if (const auto* mix = optional_member(entry, "mix")) h.mix = read_mix(reader, *mix, h);
    // What the samples were made with: read, not audited (the ranks agreed on them at round 0).
    if (const auto* settings = optional_member(entry, "settings")) {
      if (!settings->is_object()) reader.fail("settings", "expected an object of settings");
      for (const auto& [name, value] : settings->items())
        h.settings.push_back({name, reader.to_string(value, "settings." + name)});
    }

    EpochLedgers& ledgers = epochs_[h.epoch];
    const auto [open, first] = open_.try_emplace(h.epoch, ledgers.ranks.size());
    if (first) {
      ledgers.ranks.push_back(std::move(section));
      return;
    }
    RankEpoch& earlier = ledgers.ranks[open->second];
    ledgers.problems.push_back(
        {"restarted_epoch", here() + ": epoch " + std::to_string(h.epoch) +
                                " begins again (an earlier attempt began at " +
                                earlier.at(earlier.header_line) +
                                "); only the last attempt is audited"});
    earlier = std::move(section);
  }

  void read_step(const JsonReader& reader, const nlohmann::json& entry, EpochLedgers& ledgers,
                 RankEpoch& section) const {
    reader.expect_object(entry, "", {"kind", "epoch", "step", "round", "idle", "ids"});
    EmittedStep step;
    step.step_in_epoch = unsigned_member(reader, entry, "step");
    step.round = unsigned_member(reader, entry, "round");
    const bool idle = to_bool(reader, reader.required(entry, "idle", ""), "idle");
    const auto& ids = reader.required(entry, "ids", "");
    reader.expect_array(ids, "ids");
    step.samples.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      step.samples.push_back(
          SampleCost{reader.to_unsigned(ids[i], element_path("ids", i)), 0, 0, 0});

    const std::uint64_t expected_step = section.first_step + section.ledger.steps.size();
    if (step.step_in_epoch != expected_step)
      ledgers.problems.push_back({"step_order", here() + ": step " +
                                                    std::to_string(step.step_in_epoch) +
                                                    " where step " + std::to_string(expected_step) +
                                                    " was expected (steps count 0, 1, 2, ...)"});
    if (idle != step.samples.empty())
      ledgers.problems.push_back(
          {"idle_mismatch", here() + ": step " + std::to_string(step.step_in_epoch) +
                                (idle ? " is IDLE but lists " + std::to_string(ids.size()) + " ids"
                                      : " is not IDLE but lists no id")});
    section.ledger.steps.push_back(std::move(step));
  }

  void read_rejection(const JsonReader& reader, const nlohmann::json& entry,
                      RankEpoch& section) const {
    reader.expect_object(entry, "", {"kind", "epoch", "id", "reason", "detail"});
    Rejection rejection;
    rejection.id = unsigned_member(reader, entry, "id");
    rejection.reason = reader.to_string(reader.required(entry, "reason", ""), "reason");
    if (rejection.reason.empty()) reader.fail("reason", "empty; a rejection names its reason");
    rejection.detail = reader.to_string(reader.required(entry, "detail", ""), "detail");
    section.ledger.rejected.push_back(std::move(rejection));
  }

  std::filesystem::path path_;
  std::string file_;
  Epochs& epochs_;
  std::uint64_t line_ = 0;
  std::map<std::uint64_t, std::size_t> open_;  // epoch -> its section in epochs_[epoch].ranks
};

ConfigDataset load_config_dataset(const std::filesystem::path& file) {
  const PipelineConfig config = PipelineConfig::from_toml_file(file);
  const DatasetIndex index = [&] {
    try {
      return build_dataset_index(config.source);
    } catch (const DatasetError& e) {
      throw InputError(file.string() + ": source.files: " + e.what());
    }
  }();
  return ConfigDataset{file.string(),
                       index.record_count(),
                       index.fingerprint(),
                       config.batching.seed,
                       config.source.shuffle,
                       config.source.split,
                       mixed_sources(config.source, index)};
}

// The audit of one epoch, ready to print.
struct EpochOutcome {
  std::uint64_t epoch = 0;
  std::uint32_t world_size = 0;
  std::vector<const RankEpoch*> ranks;  // present, by rank
  std::vector<std::uint32_t> missing_ranks;
  bool ids_checked = false;
  AuditReport coverage;  // expected, emitted, rejected
  std::map<std::string, std::uint64_t> rejected_by_reason;
  std::vector<Problem> problems;
  bool problems_truncated = false;  // the id checks found more than they list
  bool departed = false;            // the ranks left the epoch at an agreed step
  // A resumed epoch's runs: the step each began at and its world size (empty when not resumed).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> incarnations;
};

// "[0, 37) every epoch, [37, 137) over 3 epochs", or "none".
std::string describe_mix(const std::vector<MixedSource>& mix) {
  if (mix.empty()) return "none";
  std::string text;
  for (const auto& source : mix)
    text += (text.empty() ? "[" : ", [") + std::to_string(source.first_id) + ", " +
            std::to_string(source.first_id + source.record_count) + ") " +
            (source.epochs_per_pass == 1
                 ? std::string("every epoch")
                 : "over " + std::to_string(source.epochs_per_pass) + " epochs");
  return text;
}

// The headers of one epoch must describe the same dataset and shuffle on every rank (and the same
// world size, unless they come from runs resumed onto other world sizes).
bool check_headers_agree(const std::vector<const RankEpoch*>& ranks, EpochOutcome& out,
                         bool same_world = true) {
  const RankEpoch& first = *ranks.front();
  bool agree = true;
  for (const RankEpoch* other : ranks) {
    const LedgerEpoch& a = first.header;
    const LedgerEpoch& b = other->header;
    auto differs = [&](std::string_view field, const std::string& mine, const std::string& theirs) {
      agree = false;
      out.problems.push_back({"header_mismatch", other->name() + " has " + std::string(field) +
                                                     " " + theirs + ", " + first.name() + " has " +
                                                     mine});
    };
    if (same_world && a.shard.world_size != b.shard.world_size)
      differs("world size", std::to_string(a.shard.world_size), std::to_string(b.shard.world_size));
    if (a.record_count != b.record_count)
      differs("record count", std::to_string(a.record_count), std::to_string(b.record_count));
    if (a.dataset_fingerprint != b.dataset_fingerprint)
      differs("dataset fingerprint", hex_digest(a.dataset_fingerprint),
              hex_digest(b.dataset_fingerprint));
    if (a.shard.seed != b.shard.seed)
      differs("seed", std::to_string(a.shard.seed), std::to_string(b.shard.seed));
    if (a.shard.shuffle != b.shard.shuffle)
      differs("shuffle", a.shard.shuffle ? "true" : "false", b.shard.shuffle ? "true" : "false");
    if (a.shard.split != b.shard.split)
      differs("split", std::string(split_name(a.shard.split)),
              std::string(split_name(b.shard.split)));
    if (a.mix != b.mix) differs("source mix", describe_mix(a.mix), describe_mix(b.mix));
  }
  return agree;
}

void check_against_config(const RankEpoch& rank, const ConfigDataset& config, EpochOutcome& out) {
  const LedgerEpoch& h = rank.header;
  auto differs = [&](std::string_view field, const std::string& ledger, const std::string& want) {
    out.problems.push_back({"config_mismatch", rank.name() + " has " + std::string(field) + " " +
                                                   ledger + ", " + config.file + " gives " + want});
  };
  auto dataset = [](std::uint64_t fingerprint, std::uint64_t records) {
    return hex_digest(fingerprint) + " (" + std::to_string(records) + " records)";
  };
  if (h.record_count != config.record_count || h.dataset_fingerprint != config.fingerprint)
    differs("dataset fingerprint", dataset(h.dataset_fingerprint, h.record_count),
            dataset(config.fingerprint, config.record_count));
  if (h.shard.seed != config.seed)
    differs("seed", std::to_string(h.shard.seed), std::to_string(config.seed));
  if (h.shard.shuffle != config.shuffle)
    differs("shuffle", h.shard.shuffle ? "true" : "false", config.shuffle ? "true" : "false");
  if (h.shard.split != config.split)
    differs("split", std::string(split_name(h.shard.split)), std::string(split_name(config.split)));
  if (h.mix != config.mix) differs("source mix", describe_mix(h.mix), describe_mix(config.mix));
}

// The steps a rank's trainer took: all of them, or those before its departure (the pipeline may
// have prepared more).
std::uint64_t steps_taken(const RankEpoch& rank) {
  const std::uint64_t listed = rank.first_step + rank.ledger.steps.size();
  return rank.departed ? std::min(listed, *rank.end_steps) : listed;
}

// Every rank's end line (or departure, the same on every rank), and equal step counts across
// ranks (the lockstep guarantee).
void check_steps(EpochOutcome& out) {
  const auto first_departed = std::find_if(out.ranks.begin(), out.ranks.end(),
                                           [](const RankEpoch* r) { return r->departed; });
  out.departed = first_departed != out.ranks.end();
  for (const RankEpoch* rank : out.ranks) {
    const std::uint64_t listed = rank->first_step + rank->ledger.steps.size();
    if (!rank->end_steps) {
      out.problems.push_back({"no_end", rank->name() + ": no end line for epoch " +
                                            std::to_string(out.epoch) +
                                            " (the epoch did not finish)"});
    } else if (out.departed &&
               (!rank->departed || *rank->end_steps != *(*first_departed)->end_steps)) {
      const auto how = [](const RankEpoch& r) {
        return "rank " + std::to_string(r.rank()) +
               (r.departed ? " departed after " : " ended after ") + std::to_string(*r.end_steps) +
               " steps";
      };
      out.problems.push_back({"departure_mismatch", rank->at(rank->end_line) + ": " + how(*rank) +
                                                        ", " + how(**first_departed)});
    } else if (rank->departed && *rank->end_steps > listed) {
      out.problems.push_back(
          {"departure_mismatch", rank->at(rank->end_line) + ": the departure says " +
                                     std::to_string(*rank->end_steps) + " steps, rank " +
                                     std::to_string(rank->rank()) + "'s ledger lists " +
                                     std::to_string(listed)});
    } else if (!rank->departed && *rank->end_steps != listed) {
      out.problems.push_back({"end_mismatch", rank->at(rank->end_line) + ": the end line says " +
                                                  std::to_string(*rank->end_steps) +
                                                  " steps, rank " + std::to_string(rank->rank()) +
                                                  "'s ledger lists " + std::to_string(listed)});
    }
  }
  const bool equal = std::all_of(out.ranks.begin(), out.ranks.end(), [&](const RankEpoch* r) {
    return steps_taken(*r) == steps_taken(*out.ranks.front());
  });
  if (equal) return;
  std::string counts;
  for (const RankEpoch* r : out.ranks)
    counts += (counts.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r->rank()) +
              " " + std::to_string(steps_taken(*r));
  out.problems.push_back(
      {"step_count_mismatch", "ranks yielded different numbers of steps: " + counts});
}

// The rank's shard as the pipeline computed it: of every record, or of the epoch's selection
// when sources are mixed.
EpochShard epoch_shard(const LedgerEpoch& h) {
  if (h.mix.empty()) return EpochShard(h.record_count, h.shard);
  return EpochShard(
      std::make_shared<const EpochSelection>(h.mix, h.shard.seed, h.shard.epoch, h.shard.shuffle),
      h.shard);
}

// The ids the epoch must emit or reject, ascending.
std::vector<SampleId> epoch_ids(const LedgerEpoch& h) {
  const EpochShard whole = epoch_shard(
      LedgerEpoch{h.epoch,
                  h.record_count,
                  h.dataset_fingerprint,
                  ShardSpec{h.shard.seed, h.shard.epoch, false, ShardSplit::contiguous, 0, 1},
                  h.mix,
                  {}});
  std::vector<SampleId> ids(whole.size());
  for (std::uint64_t i = 0; i < ids.size(); ++i) ids[i] = whole[i];
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool is_coverage_finding(AuditFinding::Kind kind) {
  using K = AuditFinding::Kind;
  return kind == K::missing || kind == K::duplicated || kind == K::unknown;
}

// Each id of the present ranks' shards emitted exactly once or rejected exactly once. Uses core's
// audit_epoch; its budget, totals and loss-scale findings are dropped because a ledger does not
// record token counts, totals or loss scales, and its step counts are checked by check_steps.
void check_coverage(EpochOutcome& out) {
  std::vector<SampleId> expected;
  std::vector<RankLedger> ledgers(out.world_size);
  for (const RankEpoch* rank : out.ranks) {
    const EpochShard shard = epoch_shard(rank->header);
    for (std::uint64_t i = 0; i < shard.size(); ++i) expected.push_back(shard[i]);
    ledgers[rank->rank()] = rank->ledger;
    ledgers[rank->rank()].steps.resize(steps_taken(*rank));
  }
  out.coverage = audit_epoch(expected, ledgers, BatchingConfig{},
                             out.departed ? AuditScope::until_departure : AuditScope::whole_epoch);
  out.ids_checked = true;
  const auto& findings = out.coverage.findings;
  for (const auto& finding : findings)
    if (is_coverage_finding(finding.kind))
      out.problems.push_back({std::string(to_string(finding.kind)), finding.message});
  // audit_epoch lists coverage findings first, so a full list ending in one may hide more.
  out.problems_truncated =
      findings.size() == AuditReport::kMaxFindings && is_coverage_finding(findings.back().kind);
}

// The ranks of a run that a resumed epoch went on with, or of the first one.
using Incarnations = std::map<std::uint64_t, std::vector<const RankEpoch*>>;  // by first step

// Ranks missing from an incarnation, as a problem; returns whether all are there.
bool check_all_ranks(const std::vector<const RankEpoch*>& ranks, std::uint64_t epoch,
                     EpochOutcome& out) {
  const auto world = ranks.front()->header.shard.world_size;
  std::vector<bool> present(world, false);
  for (const RankEpoch* rank : ranks) present[rank->rank()] = true;
  std::vector<std::uint32_t> missing;
  for (std::uint32_t r = 0; r < world; ++r)
    if (!present[r]) missing.push_back(r);
  if (missing.empty()) return true;
  std::string names;
  for (const auto r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
  out.missing_ranks.insert(out.missing_ranks.end(), missing.begin(), missing.end());
  out.problems.push_back(
      {"missing_rank", "no ledger of epoch " + std::to_string(epoch) + " from step " +
                           std::to_string(ranks.front()->first_step) + " for rank" +
                           (missing.size() > 1 ? "s " : " ") + names + " (world size " +
                           std::to_string(world) + "); their ids are not checked"});
  return false;
}

// An epoch resumed from checkpoints, maybe onto other world sizes: each run's steps count until
// the next run begins, and every id of the dataset is emitted once over all of them or rejected
// (by one run or several: a record read again after a checkpoint is rejected again).
void audit_resumed_epoch(const Incarnations& incarnations, EpochOutcome& out) {
  if (incarnations.begin()->first != 0)
    out.problems.push_back({"no_beginning", "no ledger of epoch " + std::to_string(out.epoch) +
                                                " from step 0: the earliest begins at step " +
                                                std::to_string(incarnations.begin()->first)});
  std::vector<const RankEpoch*> firsts;
  bool complete = true;
  for (const auto& [first_step, ranks] : incarnations) {
    out.incarnations.emplace_back(first_step, ranks.front()->header.shard.world_size);
    firsts.push_back(ranks.front());
    complete =
        check_headers_agree(ranks, out) && check_all_ranks(ranks, out.epoch, out) && complete;
  }
  complete = check_headers_agree(firsts, out, /*same_world=*/false) && complete;
  const auto& last = std::prev(incarnations.end())->second;
  out.world_size = last.front()->header.shard.world_size;
  out.ranks = last;
  // The last run ends the epoch or departs; each earlier one departed where the next begins
  // (it saved its state there), with every step up to there listed and equal on its ranks.
  check_steps(out);
  for (auto it = incarnations.begin(); std::next(it) != incarnations.end(); ++it) {
    const auto next = std::next(it)->first;
    EpochOutcome run;
    run.epoch = out.epoch;
    run.ranks = it->second;
    check_steps(run);
    out.problems.insert(out.problems.end(), run.problems.begin(), run.problems.end());
    for (const RankEpoch* rank : it->second)
      if (!rank->departed || *rank->end_steps != next)
        out.problems.push_back(
            {"resume_mismatch",
             rank->name() +
                 (rank->departed ? " departed after " + std::to_string(*rank->end_steps) + " steps"
                                 : " did not depart") +
                 ", the next run resumes at step " + std::to_string(next)});
  }
  if (!complete) return;

  const std::uint64_t records = last.front()->header.record_count;
  const std::vector<SampleId> expected = epoch_ids(last.front()->header);
  const auto in_epoch = [&](SampleId id) {
    return std::binary_search(expected.begin(), expected.end(), id);
  };
  std::map<SampleId, std::uint32_t> emitted;
  std::map<SampleId, std::uint32_t> rejected;  // by how many runs
  for (auto it = incarnations.begin(); it != incarnations.end(); ++it) {
    const auto next = std::next(it);
    std::map<SampleId, std::uint32_t> rejected_here;
    for (const RankEpoch* rank : it->second) {
      const std::uint64_t until = next == incarnations.end()
                                      ? steps_taken(*rank)
                                      : std::min(next->first, steps_taken(*rank));
      for (std::uint64_t s = rank->first_step;
           s < until && s - rank->first_step < rank->ledger.steps.size(); ++s)
        for (const auto& sample : rank->ledger.steps[s - rank->first_step].samples)
          ++emitted[sample.id];
      for (const auto& rejection : rank->ledger.rejected) ++rejected_here[rejection.id];
    }
    for (const auto& [id, count] : rejected_here) {
      if (count > 1)
        out.problems.push_back(
            {"duplicated", "id " + std::to_string(id) + " rejected " + std::to_string(count) +
                               " times by the run from step " + std::to_string(it->first)});
      ++rejected[id];
    }
  }
  AuditReport& coverage = out.coverage;
  coverage.expected = expected.size();
  const auto add = [&](std::string kind, std::string message) {
    if (out.problems.size() >= AuditReport::kMaxFindings) {
      out.problems_truncated = true;
      return;
    }
    out.problems.push_back({std::move(kind), std::move(message)});
  };
  const auto not_in_epoch = [&](SampleId id) {
    return id >= records ? ", not in the dataset of " + std::to_string(records) + " records"
                         : ", not among the records the epoch's mix selects";
  };
  for (const auto& [id, count] : emitted)
    if (!in_epoch(id)) add("unknown", "id " + std::to_string(id) + " emitted" + not_in_epoch(id));
  for (const auto& [id, runs] : rejected)
    if (!in_epoch(id)) add("unknown", "id " + std::to_string(id) + " rejected" + not_in_epoch(id));
  for (const SampleId id : expected) {
    const auto e = emitted.find(id);
    const std::uint32_t times = e == emitted.end() ? 0 : e->second;
    const bool was_rejected = rejected.contains(id);
    coverage.emitted += times > 0 ? 1 : 0;
    coverage.rejected += was_rejected ? 1 : 0;
    if (times > 1 || (times == 1 && was_rejected))
      add("duplicated", "id " + std::to_string(id) + " emitted " + std::to_string(times) +
                            " time(s)" + (was_rejected ? " and rejected" : ""));
    else if (times == 0 && !was_rejected) {
      if (out.departed)
        ++coverage.not_reached;
      else
        add("missing", "id " + std::to_string(id) + " neither emitted nor rejected");
    }
  }
  out.ids_checked = true;
}

EpochOutcome audit_one_epoch(std::uint64_t epoch, EpochLedgers& ledgers,
                             const std::optional<ConfigDataset>& config) {
  EpochOutcome out;
  out.epoch = epoch;
  out.problems = std::move(ledgers.problems);
  std::stable_sort(ledgers.ranks.begin(), ledgers.ranks.end(),
                   [](const RankEpoch& a, const RankEpoch& b) {
                     return std::pair(a.first_step, a.rank()) < std::pair(b.first_step, b.rank());
                   });
  for (const RankEpoch& rank : ledgers.ranks) {
    if (!out.ranks.empty() && out.ranks.back()->rank() == rank.rank() &&
        out.ranks.back()->first_step == rank.first_step) {
      out.problems.push_back(
          {"duplicate_rank", "rank " + std::to_string(rank.rank()) + " of epoch " +
                                 std::to_string(epoch) + " appears in " +
                                 out.ranks.back()->at(out.ranks.back()->header_line) + " and " +
                                 rank.at(rank.header_line) + "; only the first is audited"});
      continue;
    }
    out.ranks.push_back(&rank);
  }
  if (config)
    for (const RankEpoch* rank : out.ranks) check_against_config(*rank, *config, out);
  Incarnations incarnations;
  for (const RankEpoch* rank : out.ranks) incarnations[rank->first_step].push_back(rank);
  if (incarnations.size() > 1 || incarnations.begin()->first != 0) {
    std::set<SampleId> counted;  // a record rejected again after a resume counts once
    for (const RankEpoch* rank : out.ranks)
      for (const auto& rejection : rank->ledger.rejected)
        if (counted.insert(rejection.id).second) ++out.rejected_by_reason[rejection.reason];
    audit_resumed_epoch(incarnations, out);
    return out;
  }
  for (const RankEpoch* rank : out.ranks)
    for (const auto& rejection : rank->ledger.rejected) ++out.rejected_by_reason[rejection.reason];
  check_steps(out);

  out.world_size = out.ranks.front()->header.shard.world_size;
  if (!check_headers_agree(out.ranks, out)) {
    out.world_size = 0;  // unknown: the ranks disagree
    return out;
  }
  std::vector<bool> present(out.world_size, false);
  for (const RankEpoch* rank : out.ranks) present[rank->rank()] = true;
  for (std::uint32_t r = 0; r < out.world_size; ++r)
    if (!present[r]) out.missing_ranks.push_back(r);
  if (!out.missing_ranks.empty()) {
    std::string names;
    for (const auto r : out.missing_ranks) names += (names.empty() ? "" : ", ") + std::to_string(r);
    out.problems.push_back(
        {"missing_rank", "no ledger of epoch " + std::to_string(epoch) + " for rank" +
                             (out.missing_ranks.size() > 1 ? "s " : " ") + names + " (world size " +
                             std::to_string(out.world_size) + "); their ids are not checked"});
  }
  check_coverage(out);
  return out;
}

std::string problem_count(const EpochOutcome& e) {
  return (e.problems_truncated ? "at least " : "") + std::to_string(e.problems.size());
}

void print_epoch(const EpochOutcome& e) {
  std::ostringstream out;
  out << "epoch " << e.epoch << ": ";
  if (e.world_size > 0) {
    out << "world size " << e.world_size << ", ";
    if (e.missing_ranks.empty()) {
      out << "every rank present";
    } else {
      out << "missing rank(s)";
      for (const auto r : e.missing_ranks) out << ' ' << r;
    }
  } else {
    out << "ranks disagree on their epoch headers";
  }
  if (e.ids_checked)
    out << "; " << e.coverage.expected << " ids expected, " << e.coverage.emitted << " emitted, "
        << e.coverage.rejected << " rejected";
  if (!e.rejected_by_reason.empty()) {
    out << " (";
    bool first = true;
    for (const auto& [reason, count] : e.rejected_by_reason) {
      out << (first ? "" : ", ") << reason << ' ' << count;
      first = false;
    }
    out << ')';
  }
  if (e.ids_checked && e.departed)
    out << ", " << e.coverage.not_reached << " not reached (the ranks departed)";
  for (std::size_t i = 1; i < e.incarnations.size(); ++i)
    out << "; resumed at step " << e.incarnations[i].first << " on " << e.incarnations[i].second
        << " rank(s)";
  out << "; steps" << (e.departed ? " before the departure" : "") << ":";
  for (const RankEpoch* r : e.ranks) out << " rank " << r->rank() << ' ' << steps_taken(*r);
  out << '\n';
  if (e.problems.empty()) {
    out << "  ok\n";
  } else {
    out << "  " << problem_count(e) << " problem(s):\n";
    for (std::size_t i = 0; i < std::min(e.problems.size(), kFindingsPrinted); ++i)
      out << "    " << e.problems[i].kind << ": " << e.problems[i].message << '\n';
    if (e.problems.size() > kFindingsPrinted || e.problems_truncated)
      out << "    ... more in the --json report\n";
  }
  std::cout << out.str();
}

Report epoch_report(const EpochOutcome& e) {
  Report out;
  out["epoch"] = e.epoch;
  out["world_size"] = e.world_size > 0 ? Report(e.world_size) : Report(nullptr);
  out["missing_ranks"] = e.missing_ranks;
  out["ids_checked"] = e.ids_checked;
  auto if_checked = [&](std::uint64_t count) {
    return e.ids_checked ? Report(count) : Report(nullptr);
  };
  out["expected"] = if_checked(e.coverage.expected);
  out["emitted"] = if_checked(e.coverage.emitted);
  out["rejected"] = if_checked(e.coverage.rejected);
  out["departed"] = e.departed;
  out["not_reached"] = if_checked(e.coverage.not_reached);
  Report runs = Report::array();
  for (const auto& [first_step, world] : e.incarnations)
    runs.push_back({{"first_step", first_step}, {"world_size", world}});
  out["resumed_runs"] = std::move(runs);
  Report reasons = Report::object();
  for (const auto& [reason, count] : e.rejected_by_reason) reasons[reason] = count;
  out["rejected_by_reason"] = std::move(reasons);
  Report ranks = Report::array();
  for (const RankEpoch* r : e.ranks) {
    std::uint64_t emitted = 0;
    for (const auto& step : r->ledger.steps) emitted += step.samples.size();
    ranks.push_back({{"rank", r->rank()},
                     {"ledger", r->file},
                     {"header_line", r->header_line},
                     {"record_count", r->header.record_count},
                     {"dataset_fingerprint", hex_digest(r->header.dataset_fingerprint)},
                     {"steps", steps_taken(*r)},
                     {"steps_listed", r->ledger.steps.size()},
                     {"departed", r->departed},
                     {"end_steps", r->end_steps ? Report(*r->end_steps) : Report(nullptr)},
                     {"emitted", emitted},
                     {"rejected", r->ledger.rejected.size()}});
  }
  out["ranks"] = std::move(ranks);
  out["ok"] = e.problems.empty();
  out["problems"] = e.problems.size();
  out["problems_truncated"] = e.problems_truncated;
  Report findings = Report::array();
  for (const auto& p : e.problems) findings.push_back({{"kind", p.kind}, {"message", p.message}});
  out["findings"] = std::move(findings);
  return out;
}

}  // namespace

int run_audit_command(const AuditOptions& options) {
  std::vector<EpochOutcome> outcomes;
  Epochs epochs;
  std::optional<ConfigDataset> config;
  try {
    if (options.config) config = load_config_dataset(*options.config);
    for (const auto& ledger : options.ledgers) LedgerFileReader(ledger, epochs).read();
  } catch (const InputError& e) {
    std::cerr << "odbatch audit: " << e.what() << '\n';
    return 2;
  } catch (const ConfigFileError& e) {
    std::cerr << "odbatch audit: " << e.what() << '\n';
    return 2;
  }
  for (auto& [epoch, ledgers] : epochs) outcomes.push_back(audit_one_epoch(epoch, ledgers, config));

  std::size_t failed_epochs = 0;
  for (const auto& outcome : outcomes) {
    print_epoch(outcome);
    if (!outcome.problems.empty()) ++failed_epochs;
  }
  std::cout << "not checked: " << kNotChecked << '\n';
  if (failed_epochs == 0)
    std::cout << "audit passed: " << outcomes.size() << " epoch(s) in " << options.ledgers.size()
              << " ledger(s)\n";
  else
    std::cout << "audit FAILED: problems in " << failed_epochs << " of " << outcomes.size()
              << " epoch(s)\n";

  if (options.json) {
    Report report = command_report("audit");
    report["ok"] = failed_epochs == 0;
    Report files = Report::array();
    for (const auto& ledger : options.ledgers) files.push_back(ledger.string());
    report["ledgers"] = std::move(files);
    if (config)
      report["config"] = {{"file", config->file},
                          {"record_count", config->record_count},
                          {"dataset_fingerprint", hex_digest(config->fingerprint)}};
    report["not_checked"] = kNotChecked;
    Report epochs_report = Report::array();
    for (const auto& outcome : outcomes) epochs_report.push_back(epoch_report(outcome));
    report["epochs"] = std::move(epochs_report);
    std::ofstream out(*options.json, std::ios::binary);
    if (!(out << to_readable_json(report))) {
      std::cerr << "odbatch audit: " << options.json->string() << ": cannot write the report\n";
      return 2;
    }
  }
  return failed_epochs == 0 ? 0 : 1;
}

}  // namespace odbatch::cli
