#include "odbatch/core/config.hpp"

#include <array>
#include <utility>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {
namespace {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

constexpr NameTable<BudgetMode, 2> kBudgetModes{
    {{BudgetMode::padded, "padded"}, {BudgetMode::packed, "packed"}}};
constexpr NameTable<Warmup, 3> kWarmups{
    {{Warmup::none, "none"}, {Warmup::short_ramp, "short"}, {Warmup::linear, "linear"}}};
constexpr NameTable<Policy, 2> kPolicies{
    {{Policy::balanced, "balanced"}, {Policy::reference, "reference"}}};
constexpr NameTable<LossScaling, 4> kLossScalings{{{LossScaling::none, "none"},
                                                   {LossScaling::samples, "samples"},
                                                   {LossScaling::tokens, "tokens"},
                                                   {LossScaling::labels, "labels"}}};
constexpr NameTable<OverBudgetPolicy, 2> kOverBudget{
    {{OverBudgetPolicy::singleton, "singleton"}, {OverBudgetPolicy::reject, "reject"}}};
constexpr NameTable<OverLengthPolicy, 2> kOverLength{
    {{OverLengthPolicy::truncate, "truncate"}, {OverLengthPolicy::reject, "reject"}}};
constexpr NameTable<ZeroLabelPolicy, 2> kZeroLabels{
    {{ZeroLabelPolicy::reject, "reject"}, {ZeroLabelPolicy::keep, "keep"}}};

template <class Enum, std::size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum v) {
  for (const auto& [value, name] : table)
    if (value == v) return name;
  return "?";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const NameTable<Enum, N>& table, std::string_view s) {
  for (const auto& [value, name] : table)
    if (name == s) return value;
  return std::nullopt;
}

// Keeps a window's worst case ((D+1) * window samples) addressable with 32-bit indices.
constexpr std::uint64_t kMaxWindowSamples = 1u << 24;

}  // namespace

void validate(const BatchingConfig& c) {
  if (c.token_budget == 0) throw ConfigError("token_budget", "must be at least 1");
  if (c.max_seq_len == 0) throw ConfigError("max_seq_len", "must be at least 1");
  if (c.window == 0) throw ConfigError("window", "must be at least 1");
  if (c.max_defer_rounds > 1000)
    throw ConfigError("max_defer_rounds",
                      "must be at most 1000 (got " + std::to_string(c.max_defer_rounds) + ")");
  if (std::uint64_t{c.window} * (c.max_defer_rounds + 1) > kMaxWindowSamples)
    throw ConfigError("window", "window * (max_defer_rounds + 1) must be at most " +
                                    std::to_string(kMaxWindowSamples));
  if (c.hold_pct > 100)
    throw ConfigError("hold_pct",
                      "must be between 0 and 100 (got " + std::to_string(c.hold_pct) + ")");
  if (name_of(kBudgetModes, c.budget_mode) == "?")
    throw ConfigError("budget_mode", "unknown value");
  if (name_of(kWarmups, c.warmup) == "?") throw ConfigError("warmup", "unknown value");
  if (name_of(kPolicies, c.policy) == "?") throw ConfigError("policy", "unknown value");
  if (name_of(kLossScalings, c.loss_scaling) == "?")
    throw ConfigError("loss_scaling", "unknown value");
  if (name_of(kOverBudget, c.over_budget) == "?") throw ConfigError("over_budget", "unknown value");
  if (name_of(kOverLength, c.over_length) == "?") throw ConfigError("over_length", "unknown value");
  if (name_of(kZeroLabels, c.zero_labels) == "?") throw ConfigError("zero_labels", "unknown value");
}

std::uint64_t fingerprint(const BatchingConfig& c, std::uint32_t world_size) {
  StableHasher h(0x6f64626174636821ULL);  // "odbatch!"
  h.add(kProtocolVersion)
      .add(world_size)
      .add(c.token_budget)
      .add(static_cast<std::uint64_t>(c.budget_mode))
      .add(c.patch_budget)
      .add(c.max_seq_len)
      .add(c.window)
      .add(static_cast<std::uint64_t>(c.warmup))
      .add(c.max_defer_rounds)
      .add(c.hold_pct)
      .add(static_cast<std::uint64_t>(c.policy))
      .add(static_cast<std::uint64_t>(c.loss_scaling))
      .add(static_cast<std::uint64_t>(c.over_budget))
      .add(static_cast<std::uint64_t>(c.over_length))
      .add(static_cast<std::uint64_t>(c.zero_labels))
      .add(c.seed);
  return h.digest();
}

std::string_view to_string(BudgetMode v) {
  return name_of(kBudgetModes, v);
}
std::string_view to_string(Warmup v) {
  return name_of(kWarmups, v);
}
std::string_view to_string(Policy v) {
  return name_of(kPolicies, v);
}
std::string_view to_string(LossScaling v) {
  return name_of(kLossScalings, v);
}
std::string_view to_string(OverBudgetPolicy v) {
  return name_of(kOverBudget, v);
}
std::string_view to_string(OverLengthPolicy v) {
  return name_of(kOverLength, v);
}
std::string_view to_string(ZeroLabelPolicy v) {
  return name_of(kZeroLabels, v);
}

std::optional<BudgetMode> parse_budget_mode(std::string_view s) {
  return parse_name(kBudgetModes, s);
}
std::optional<Warmup> parse_warmup(std::string_view s) {
  return parse_name(kWarmups, s);
}
std::optional<Policy> parse_policy(std::string_view s) {
  return parse_name(kPolicies, s);
}
std::optional<LossScaling> parse_loss_scaling(std::string_view s) {
  return parse_name(kLossScalings, s);
}
std::optional<OverBudgetPolicy> parse_over_budget_policy(std::string_view s) {
  return parse_name(kOverBudget, s);
}
std::optional<OverLengthPolicy> parse_over_length_policy(std::string_view s) {
  return parse_name(kOverLength, s);
}
std::optional<ZeroLabelPolicy> parse_zero_label_policy(std::string_view s) {
  return parse_name(kZeroLabels, s);
}

}  // namespace odbatch
