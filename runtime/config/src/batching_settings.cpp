#include "odbatch/config/batching_settings.hpp"

#include <array>
#include <limits>
#include <optional>
#include <type_traits>

namespace odbatch {
namespace {

// How a value was found, for the "got ..." part of an error.
std::string found(const SettingValue& value) {
  if (const auto* v = std::get_if<std::int64_t>(&value)) return std::to_string(*v);
  if (const auto* v = std::get_if<std::uint64_t>(&value)) return std::to_string(*v);
  if (const auto* v = std::get_if<std::string>(&value)) return "\"" + *v + "\"";
  return std::get<OtherKindValue>(value).description;
}

template <class T>
T to_integer(const SettingValue& value, std::uint64_t minimum) {
  const std::string expected = minimum == 0 ? "a non-negative integer" : "a positive integer";
  std::uint64_t magnitude = 0;
  if (const auto* v = std::get_if<std::uint64_t>(&value)) {
    magnitude = *v;
  } else if (const auto* s = std::get_if<std::int64_t>(&value); s && *s >= 0) {
    magnitude = static_cast<std::uint64_t>(*s);
  } else {
    throw SettingError("expected " + expected + ", got " + found(value));
  }
  if (magnitude < minimum) throw SettingError("expected " + expected + ", got " + found(value));
  constexpr std::uint64_t maximum = std::numeric_limits<T>::max();
  if (magnitude > maximum)
    throw SettingError("expected an integer at most " + std::to_string(maximum) + ", got " +
                       found(value));
  return static_cast<T>(magnitude);
}

template <class Enum, std::size_t N>
std::string names_of(const std::array<Enum, N>& values) {
  std::string names;
  for (const Enum v : values) names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  return names;
}

template <class Enum, std::size_t N>
Enum to_enum(const SettingValue& value, const std::array<Enum, N>& values,
             std::optional<Enum> (*parse)(std::string_view)) {
  if (const auto* name = std::get_if<std::string>(&value))
    if (const auto parsed = parse(*name)) return *parsed;
  throw SettingError("expected one of " + names_of(values) + "; got " + found(value));
}

// Every value of each enum, for listing the accepted names in errors.
constexpr std::array kBudgetModes{BudgetMode::padded, BudgetMode::packed};
constexpr std::array kWarmups{Warmup::none, Warmup::short_ramp, Warmup::linear};
constexpr std::array kPolicies{Policy::balanced, Policy::reference};
constexpr std::array kLossScalings{LossScaling::none, LossScaling::samples, LossScaling::tokens,
                                   LossScaling::labels};
constexpr std::array kOverBudgetPolicies{OverBudgetPolicy::singleton, OverBudgetPolicy::reject};
constexpr std::array kOverLengthPolicies{OverLengthPolicy::truncate, OverLengthPolicy::reject};
constexpr std::array kZeroLabelPolicies{ZeroLabelPolicy::reject, ZeroLabelPolicy::keep};

struct Setting {
  std::string_view name;
  void (*set)(BatchingConfig&, const SettingValue&);
  SettingValue (*get)(const BatchingConfig&);
};

template <auto Field, std::uint64_t Minimum>
constexpr Setting integer_setting(std::string_view name) {
  using T = std::remove_cvref_t<decltype(std::declval<BatchingConfig&>().*Field)>;
  return {name,
          [](BatchingConfig& c, const SettingValue& v) { c.*Field = to_integer<T>(v, Minimum); },
          [](const BatchingConfig& c) -> SettingValue { return std::uint64_t{c.*Field}; }};
}

template <auto Field, auto& Values, auto Parse>
constexpr Setting enum_setting(std::string_view name) {
  return {name,
          [](BatchingConfig& c, const SettingValue& v) { c.*Field = to_enum(v, Values, Parse); },
          [](const BatchingConfig& c) -> SettingValue { return std::string(to_string(c.*Field)); }};
}

using C = BatchingConfig;
// Budgets, lengths and the window must be at least 1; validate() checks cross-field limits.
constexpr std::array kSettings{
    integer_setting<&C::token_budget, 1>("token_budget"),
    enum_setting<&C::budget_mode, kBudgetModes, parse_budget_mode>("budget_mode"),
    integer_setting<&C::patch_budget, 0>("patch_budget"),
    integer_setting<&C::max_seq_len, 1>("max_seq_len"),
    integer_setting<&C::window, 1>("window"),
    enum_setting<&C::warmup, kWarmups, parse_warmup>("warmup"),
    integer_setting<&C::max_defer_rounds, 0>("max_defer_rounds"),
    integer_setting<&C::hold_pct, 0>("hold_pct"),
    enum_setting<&C::policy, kPolicies, parse_policy>("policy"),
    enum_setting<&C::loss_scaling, kLossScalings, parse_loss_scaling>("loss_scaling"),
    enum_setting<&C::over_budget, kOverBudgetPolicies, parse_over_budget_policy>("over_budget"),
    enum_setting<&C::over_length, kOverLengthPolicies, parse_over_length_policy>("over_length"),
    enum_setting<&C::zero_labels, kZeroLabelPolicies, parse_zero_label_policy>("zero_labels"),
    integer_setting<&C::seed, 0>("seed"),
};

constexpr auto kNames = [] {
  std::array<std::string_view, kSettings.size()> names{};
  for (std::size_t i = 0; i < kSettings.size(); ++i) names[i] = kSettings[i].name;
  return names;
}();

const Setting& find_setting(std::string_view name) {
  for (const auto& s : kSettings)
    if (s.name == name) return s;
  std::string known;
  for (const auto n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw SettingError("unknown key (known keys: " + known + ")");
}

}  // namespace

std::span<const std::string_view> batching_setting_names() {
  return kNames;
}

void set_batching_setting(BatchingConfig& config, std::string_view name,
                          const SettingValue& value) {
  find_setting(name).set(config, value);
}

SettingValue get_batching_setting(const BatchingConfig& config, std::string_view name) {
  return find_setting(name).get(config);
}

}  // namespace odbatch
