#include "odbatch/config/preprocessor_config.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "odbatch/core/config.hpp"
#include "odbatch/source/regular_file.hpp"

namespace odbatch {
namespace {

using nlohmann::json;

constexpr std::string_view kSetting = "images.preprocessor_config";

[[noreturn]] void refuse(const std::filesystem::path& file, const std::string& problem) {
  throw ConfigError(std::string(kSetting), file.string() + ": " + problem);
}

// The whole number at `key` of `object`, within 1..max, or nothing when it is absent or null.
std::optional<std::uint64_t> whole(const std::filesystem::path& file, const json& object,
                                   const std::string& key, std::uint64_t max) {
  const auto at = object.find(key);
  if (at == object.end() || at->is_null()) return std::nullopt;
  if (!at->is_number_unsigned() || at->get<std::uint64_t>() == 0 || at->get<std::uint64_t>() > max)
    refuse(file, key + ": expected a whole number from 1 to " + std::to_string(max) + ", got " +
                     at->dump().substr(0, 80));
  return at->get<std::uint64_t>();
}

std::optional<double> positive(const std::filesystem::path& file, const json& object,
                               const std::string& key) {
  const auto at = object.find(key);
  if (at == object.end() || at->is_null()) return std::nullopt;
  if (!at->is_number() || !std::isfinite(at->get<double>()) || at->get<double>() <= 0)
    refuse(file, key + ": expected a positive number, got " + at->dump().substr(0, 80));
  return at->get<double>();
}

std::optional<std::array<double, 3>> per_channel(const std::filesystem::path& file,
                                                 const json& object, const std::string& key) {
  const auto at = object.find(key);
  if (at == object.end() || at->is_null()) return std::nullopt;
  if (!at->is_array() || at->size() != 3)
    refuse(file, key + ": expected 3 numbers (R, G, B), got " + at->dump().substr(0, 80));
  std::array<double, 3> values{};
  for (std::size_t c = 0; c < 3; ++c) {
    if (!(*at)[c].is_number() || !std::isfinite((*at)[c].get<double>()))
      refuse(file, key + ": expected 3 numbers (R, G, B), got " + at->dump().substr(0, 80));
    values[c] = (*at)[c].get<double>();
  }
  return values;
}

bool flag(const std::filesystem::path& file, const json& object, const std::string& key) {
  const auto at = object.find(key);
  if (at == object.end() || at->is_null()) return true;
  if (!at->is_boolean()) refuse(file, key + ": expected true or false");
  return at->get<bool>();
}

}  // namespace

PreprocessorConfig read_preprocessor_config(const std::filesystem::path& file) {
  std::string text;
  try {
    text = read_regular_file(file.string(), kMaxPreprocessorConfigBytes);
  } catch (const FileReadError& e) {
    refuse(file, e.problem());
  }
  const json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) refuse(file, "not valid JSON");
  if (!root.is_object()) refuse(file, "expected a JSON object");
  constexpr std::uint64_t kPixels = std::uint64_t{1} << 30;
  PreprocessorConfig values;
  if (const auto size = root.find("size"); size != root.end() && size->is_object()) {
    values.min_pixels = whole(file, *size, "shortest_edge", kPixels);
    values.max_pixels = whole(file, *size, "longest_edge", kPixels);
  }
  if (auto min_pixels = whole(file, root, "min_pixels", kPixels)) values.min_pixels = min_pixels;
  if (auto max_pixels = whole(file, root, "max_pixels", kPixels)) values.max_pixels = max_pixels;
  if (auto patch = whole(file, root, "patch_size", 1024))
    values.patch_size = static_cast<std::uint32_t>(*patch);
  if (auto merge = whole(file, root, "merge_size", 16))
    values.merge_size = static_cast<std::uint32_t>(*merge);
  if (auto temporal = whole(file, root, "temporal_patch_size", kMaxTemporalPatchSize))
    values.temporal_patch_size = static_cast<std::uint32_t>(*temporal);
  values.rescale_factor = positive(file, root, "rescale_factor");
  values.image_mean = per_channel(file, root, "image_mean");
  values.image_std = per_channel(file, root, "image_std");
  if (!flag(file, root, "do_rescale")) values.rescale_factor = 1.0;
  if (!flag(file, root, "do_normalize")) {
    values.image_mean = std::array<double, 3>{0, 0, 0};
    values.image_std = std::array<double, 3>{1, 1, 1};
  }
  return values;
}

const std::set<std::string>& preprocessor_config_keys() {
  static const std::set<std::string> keys = {
      "min_pixels",          "max_pixels",     "patch_size", "merge_size",
      "temporal_patch_size", "rescale_factor", "image_mean", "image_std"};
  return keys;
}

void apply_preprocessor_config(const PreprocessorConfig& values,
                               const std::set<std::string>& explicit_keys,
                               VisionGeometryConfig& geometry, PixelValuesConfig& pixel_values) {
  const auto set = [&](const char* key, const auto& value, auto& into) {
    if (value && !explicit_keys.contains(key)) into = *value;
  };
  set("min_pixels", values.min_pixels, geometry.min_pixels);
  set("max_pixels", values.max_pixels, geometry.max_pixels);
  set("patch_size", values.patch_size, geometry.patch_size);
  set("merge_size", values.merge_size, geometry.merge_size);
  set("temporal_patch_size", values.temporal_patch_size, pixel_values.temporal_patch_size);
  set("rescale_factor", values.rescale_factor, pixel_values.rescale_factor);
  set("image_mean", values.image_mean, pixel_values.image_mean);
  set("image_std", values.image_std, pixel_values.image_std);
}

}  // namespace odbatch
