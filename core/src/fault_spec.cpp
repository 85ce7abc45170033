#include "odbatch/core/fault_spec.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <stdexcept>

namespace odbatch {
namespace {

using std::chrono::milliseconds;

constexpr std::array<FaultKind, 7> kKinds{FaultKind::kill,
                                          FaultKind::stop,
                                          FaultKind::delay,
                                          FaultKind::corrupt,
                                          FaultKind::truncate,
                                          FaultKind::wrong_version,
                                          FaultKind::store_unreachable};

constexpr std::uint64_t kMaxDurationMs = 24ull * 3600 * 1000;

bool has_duration(FaultKind kind) {
  return kind == FaultKind::stop || kind == FaultKind::delay;
}

std::uint64_t parse_number(std::string_view field, std::string_view value) {
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc{} || end != value.data() + value.size())
    throw std::invalid_argument("fault spec: " + std::string(field) + " '" + std::string(value) +
                                "' is not a non-negative integer");
  return number;
}

FaultKind parse_kind(std::string_view value) {
  for (FaultKind kind : kKinds)
    if (to_string(kind) == value) return kind;
  std::string known;
  for (FaultKind kind : kKinds) known += (known.empty() ? "" : ", ") + std::string(to_string(kind));
  throw std::invalid_argument("fault spec: unknown kind '" + std::string(value) + "' (one of " +
                              known + ")");
}

}  // namespace

std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::kill:
      return "kill";
    case FaultKind::stop:
      return "stop";
    case FaultKind::delay:
      return "delay";
    case FaultKind::corrupt:
      return "corrupt";
    case FaultKind::truncate:
      return "truncate";
    case FaultKind::wrong_version:
      return "wrong_version";
    case FaultKind::store_unreachable:
      return "store_unreachable";
  }
  return "unknown";
}

std::span<const FaultKind> all_fault_kinds() {
  return kKinds;
}

FaultSpec parse_fault_spec(std::string_view text) {
  FaultSpec spec;
  bool kind_seen = false;
  bool rank_seen = false;
  bool duration_seen = false;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto equals = item.find('=');
    if (equals == std::string_view::npos)
      throw std::invalid_argument("fault spec: '" + std::string(item) + "' is not FIELD=VALUE");
    const std::string_view field = item.substr(0, equals);
    const std::string_view value = item.substr(equals + 1);
    if (field == "kind") {
      spec.kind = parse_kind(value);
      kind_seen = true;
    } else if (field == "rank") {
      const auto rank = parse_number(field, value);
      if (rank > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("fault spec: rank " + std::string(value) + " is out of range");
      spec.rank = static_cast<std::uint32_t>(rank);
      rank_seen = true;
    } else if (field == "round") {
      spec.round = parse_number(field, value);
    } else if (field == "ms") {
      const auto ms = parse_number(field, value);
      if (ms > kMaxDurationMs)
        throw std::invalid_argument("fault spec: ms " + std::string(value) + " is over a day");
      spec.duration = milliseconds(static_cast<milliseconds::rep>(ms));
      duration_seen = true;
    } else {
      throw std::invalid_argument("fault spec: unknown field '" + std::string(field) +
                                  "' (kind, rank, round, ms)");
    }
  }
  if (!kind_seen) throw std::invalid_argument("fault spec: kind= is missing");
  if (!rank_seen) throw std::invalid_argument("fault spec: rank= is missing");
  if (has_duration(spec.kind) != duration_seen)
    throw std::invalid_argument("fault spec: ms= is " +
                                std::string(duration_seen ? "not taken" : "required") + " by " +
                                std::string(to_string(spec.kind)));
  if (spec.kind == FaultKind::store_unreachable && spec.rank != 0)
    throw std::invalid_argument("fault spec: store_unreachable needs rank=0, the store's host");
  return spec;
}

std::string to_string(const FaultSpec& spec) {
  std::string text = "kind=" + std::string(to_string(spec.kind)) +
                     ",rank=" + std::to_string(spec.rank) + ",round=" + std::to_string(spec.round);
  if (has_duration(spec.kind)) text += ",ms=" + std::to_string(spec.duration.count());
  return text;
}

bool fault_fails_run(const FaultSpec& spec, const AbortTiming& timing) {
  switch (spec.kind) {
    case FaultKind::stop:
      return spec.duration > timing.peer_timeout;
    case FaultKind::delay:
      return timing.round_timeout.count() > 0 && spec.duration > timing.round_timeout;
    default:
      return true;
  }
}

milliseconds abort_bound(const FaultSpec& spec, const AbortTiming& timing) {
  const milliseconds propagation = 2 * timing.heartbeat_interval;
  switch (spec.kind) {
    case FaultKind::kill:
      return timing.peer_timeout + propagation;
    case FaultKind::stop:
      // A stopped store host is noticed when a store call gives up, or by its heartbeat.
      if (spec.rank == 0)
        return std::max(timing.peer_timeout, timing.store_timeout + timing.heartbeat_interval) +
               propagation;
      return timing.peer_timeout + propagation;
    case FaultKind::delay:
      return timing.round_timeout + propagation;
    case FaultKind::store_unreachable:
      return timing.store_timeout + propagation;
    case FaultKind::corrupt:
    case FaultKind::truncate:
    case FaultKind::wrong_version:
      return propagation;
  }
  return propagation;
}

milliseconds exit_bound(const FaultSpec& spec, const AbortTiming& timing, bool hosts_store) {
  return abort_bound(spec, timing) + (hosts_store ? timing.peer_timeout : milliseconds(0));
}

FaultSpec random_fault(SplitMix64& rng, std::span<const FaultKind> kinds, std::uint32_t world,
                       std::uint64_t rounds, const AbortTiming& timing) {
  if (kinds.empty() || world == 0 || rounds == 0)
    throw std::invalid_argument("random_fault needs a kind, a rank and a round to choose from");
  FaultSpec spec;
  spec.kind = kinds[rng.next() % kinds.size()];
  spec.rank = spec.kind == FaultKind::store_unreachable
                  ? 0
                  : static_cast<std::uint32_t>(rng.next() % world);
  spec.round = rng.next() % rounds;
  // Twice the timeout the fault must outlast: far from the boundary a loaded machine blurs.
  if (spec.kind == FaultKind::stop) spec.duration = 2 * timing.peer_timeout;
  if (spec.kind == FaultKind::delay) spec.duration = 2 * timing.round_timeout;
  return spec;
}

}  // namespace odbatch
