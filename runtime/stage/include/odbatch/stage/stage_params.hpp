#pragma once
// A stage's parameters: the [stage.params] table of its [[stage]] entry (or set in code), handed to
// the stage's factory. Scalars and arrays of scalars; the accessors name the stage and the key
// when a value is missing or of another type.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace odbatch {

using StageParamScalar = std::variant<bool, std::int64_t, double, std::string>;
using StageParamValue =
    std::variant<bool, std::int64_t, double, std::string, std::vector<StageParamScalar>>;

// A parameter a stage cannot use: "params.min_tokens: expected an integer, got a string".
class StageParamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class StageParams {
 public:
  StageParams() = default;
  explicit StageParams(std::map<std::string, StageParamValue> values)
      : values_(std::move(values)) {}

  void set(const std::string& key, StageParamValue value) { values_[key] = std::move(value); }
  bool contains(const std::string& key) const { return values_.contains(key); }
  const std::map<std::string, StageParamValue>& values() const { return values_; }

  // The value of `key` as the type asked for, `fallback` when the key is absent; a value of
  // another type throws StageParamError (an integer is a number too).
  bool flag(const std::string& key, bool fallback) const;
  std::int64_t integer(const std::string& key, std::int64_t fallback) const;
  double number(const std::string& key, double fallback) const;
  std::string text(const std::string& key, const std::string& fallback) const;
  std::vector<std::string> texts(const std::string& key) const;  // absent: empty
  // The same without a fallback: an absent key throws StageParamError.
  std::int64_t integer(const std::string& key) const;
  std::string text(const std::string& key) const;

  // Every key and value in key order, as TOML writes them ("{ min_tokens = 8, words = [\"a\"] }"),
  // floats to the last bit: what ranks and checkpoints compare.
  std::string canonical() const;

  friend bool operator==(const StageParams&, const StageParams&) = default;

 private:
  const StageParamValue* find(const std::string& key) const;
  std::map<std::string, StageParamValue> values_;
};

}  // namespace odbatch
