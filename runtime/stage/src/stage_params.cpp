#include "odbatch/stage/stage_params.hpp"

#include "odbatch/core/toml_string.hpp"

#include <cstdio>

namespace odbatch {
namespace {

std::string type_name(const StageParamValue& value) {
  switch (value.index()) {
    case 0:
      return "true or false";
    case 1:
      return "an integer";
    case 2:
      return "a float";
    case 3:
      return "a string";
    default:
      return "an array";
  }
}

[[noreturn]] void wrong_type(const std::string& key, const std::string& expected,
                             const StageParamValue& value) {
  throw StageParamError("params." + key + ": expected " + expected + ", got " + type_name(value));
}

std::string scalar_text(const StageParamScalar& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *d);
    return text;
  }
  return toml_string(std::get<std::string>(value));
}

}  // namespace

const StageParamValue* StageParams::find(const std::string& key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

bool StageParams::flag(const std::string& key, bool fallback) const {
  const auto* value = find(key);
  if (!value) return fallback;
  if (const auto* b = std::get_if<bool>(value)) return *b;
  wrong_type(key, "true or false", *value);
}

std::int64_t StageParams::integer(const std::string& key, std::int64_t fallback) const {
  return contains(key) ? integer(key) : fallback;
}

std::int64_t StageParams::integer(const std::string& key) const {
  const auto* value = find(key);
  if (!value) throw StageParamError("params." + key + ": missing (expected an integer)");
  if (const auto* i = std::get_if<std::int64_t>(value)) return *i;
  wrong_type(key, "an integer", *value);
}

double StageParams::number(const std::string& key, double fallback) const {
  const auto* value = find(key);
  if (!value) return fallback;
  if (const auto* d = std::get_if<double>(value)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(value)) return static_cast<double>(*i);
  wrong_type(key, "a number", *value);
}

std::string StageParams::text(const std::string& key, const std::string& fallback) const {
  return contains(key) ? text(key) : fallback;
}

std::string StageParams::text(const std::string& key) const {
  const auto* value = find(key);
  if (!value) throw StageParamError("params." + key + ": missing (expected a string)");
  if (const auto* s = std::get_if<std::string>(value)) return *s;
  wrong_type(key, "a string", *value);
}

std::vector<std::string> StageParams::texts(const std::string& key) const {
  const auto* value = find(key);
  if (!value) return {};
  const auto* array = std::get_if<std::vector<StageParamScalar>>(value);
  if (!array) wrong_type(key, "an array of strings", *value);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* s = std::get_if<std::string>(&(*array)[i]);
    if (!s)
      throw StageParamError("params." + key + "[" + std::to_string(i) +
                            "]: expected a string (an array of strings)");
    out.push_back(*s);
  }
  return out;
}

std::string StageParams::canonical() const {
  if (values_.empty()) return "{}";
  std::string out = "{ ";
  bool first = true;
  for (const auto& [key, value] : values_) {
    if (!first) out += ", ";
    first = false;
    out += key + " = ";
    if (const auto* array = std::get_if<std::vector<StageParamScalar>>(&value)) {
      out += "[";
      for (std::size_t i = 0; i < array->size(); ++i)
        out += (i ? ", " : "") + scalar_text((*array)[i]);
      out += "]";
    } else {
      out += std::visit(
          [](const auto& v) -> std::string {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>,
                                         std::vector<StageParamScalar>>) {
              return "";
            } else {
              return scalar_text(StageParamScalar(v));
            }
          },
          value);
    }
  }
  return out + " }";
}

}  // namespace odbatch
