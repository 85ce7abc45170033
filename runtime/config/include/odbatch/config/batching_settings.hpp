#pragma once
// The batching settings by name, as config files spell them: the one place that maps a setting's
// name and value onto BatchingConfig, shared by every config reader (TOML, JSON).
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "odbatch/core/config.hpp"

namespace odbatch {

// A value of a kind no batching setting takes, described for error messages (e.g. "a boolean").
struct OtherKindValue {
  std::string description;
  friend bool operator==(const OtherKindValue&, const OtherKindValue&) = default;
};

// A setting's value as a reader found it. Integers and names (strings) are the kinds settings
// take; readers whose integers may exceed int64 (JSON) pass them as uint64.
using SettingValue = std::variant<std::int64_t, std::uint64_t, std::string, OtherKindValue>;

// What is wrong with a setting, without its key or location (the reader adds those), e.g.
// "expected a positive integer, got -3".
class SettingError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Every setting's name, in BatchingConfig's field order: exactly the struct's field names.
std::span<const std::string_view> batching_setting_names();

// Sets the named field. Throws SettingError for an unknown name, a value of the wrong kind, an
// integer out of the field's range or an unknown enum name. Cross-field rules are validate()'s.
void set_batching_setting(BatchingConfig& config, std::string_view name, const SettingValue& value);

// The named field's value: a uint64 for integers, the name for enums. Throws SettingError for an
// unknown name.
SettingValue get_batching_setting(const BatchingConfig& config, std::string_view name);

}  // namespace odbatch
