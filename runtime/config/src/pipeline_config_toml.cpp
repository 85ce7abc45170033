#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "odbatch/config/batching_config_toml.hpp"
#include "odbatch/config/batching_settings.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/config/preprocessor_config.hpp"
#include "stage_config_toml.hpp"
#include "toml_document.hpp"

namespace odbatch {
namespace {

using toml_document::location;

std::string text(const toml::node& node) {
  const auto* s = node.as_string();
  if (!s) throw SettingError("expected a string");
  return s->get();
}

bool boolean(const toml::node& node) {
  const auto* b = node.as_boolean();
  if (!b) throw SettingError("expected true or false");
  return b->get();
}

std::uint64_t integer(const toml::node& node, std::uint64_t min, std::uint64_t max) {
  const auto* i = node.as_integer();
  if (!i) throw SettingError("expected an integer");
  const std::int64_t v = i->get();
  if (v < 0 || static_cast<std::uint64_t>(v) < min || static_cast<std::uint64_t>(v) > max)
    throw SettingError("expected an integer between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + std::to_string(v));
  return static_cast<std::uint64_t>(v);
}

std::uint32_t integer32(const toml::node& node, std::uint32_t min) {
  return static_cast<std::uint32_t>(integer(node, min, std::numeric_limits<std::uint32_t>::max()));
}

// A TOML float or integer, as Python reads a JSON number into a float.
double number(const toml::node& node) {
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
  throw SettingError("expected a number");
}

// One number per colour channel (R, G, B).
std::array<double, 3> per_channel(const toml::node& node) {
  const auto* array = node.as_array();
  if (!array || array->size() != 3)
    throw SettingError("expected an array of 3 numbers, one per channel (R, G, B)");
  std::array<double, 3> values{};
  for (std::size_t c = 0; c < 3; ++c) values[c] = number(*array->get(c));
  return values;
}

template <class Enum>
Enum name_of(const toml::node& node, std::optional<Enum> (*parse)(std::string_view),
             std::string_view choices) {
  const auto value = parse(text(node));
  if (!value) throw SettingError("expected one of " + std::string(choices));
  return *value;
}

std::optional<ShardSplit> parse_split(std::string_view s) {
  if (s == "contiguous") return ShardSplit::contiguous;
  if (s == "strided") return ShardSplit::strided;
  return std::nullopt;
}
std::optional<BadRecordPolicy> parse_bad_record(std::string_view s) {
  if (s == "skip") return BadRecordPolicy::skip;
  if (s == "fail") return BadRecordPolicy::fail;
  return std::nullopt;
}
std::optional<PixelDtype> parse_pixel_dtype(std::string_view s) {
  for (const auto dtype : {PixelDtype::uint8, PixelDtype::float32, PixelDtype::bfloat16})
    if (s == to_string(dtype)) return dtype;
  return std::nullopt;
}
std::optional<BatchLayout> parse_layout(std::string_view s) {
  if (s == "padded") return BatchLayout::padded;
  if (s == "packed") return BatchLayout::packed;
  return std::nullopt;
}

using Setter = std::function<void(const toml::node&, PipelineConfig&)>;
using TableSetters = std::map<std::string, Setter, std::less<>>;

std::filesystem::path resolved(const std::filesystem::path& base_dir, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute() ? p : base_dir / p;
}

// A list of paths, glob or brace patterns, URLs or @list files.
std::vector<std::string> file_list(const toml::node& node, const std::filesystem::path& base_dir) {
  const auto* array = node.as_array();
  if (!array) throw SettingError("expected an array of file paths or glob patterns");
  std::vector<std::string> files;
  for (const auto& entry : *array) files.push_back(resolved(base_dir, text(entry)));
  return files;
}

// The shortest text that reads back as `value` (std::to_string shows 1e-300 as 0.000000).
std::string shortest(double value) {
  std::array<char, 32> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  return std::string(digits.data(), end);
}

// A source read `fraction` of per epoch is read whole once every 1 / fraction epochs, which must
// be a whole number: an epoch reads whole chunks of a pass, never a record twice.
std::uint64_t epochs_per_pass_of_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0))
    throw SettingError("expected a number above 0 and at most 1, got " + shortest(fraction));
  const double epochs = std::round(1.0 / fraction);
  // Checked before the conversion to an integer, which is undefined past 2^64.
  if (epochs > static_cast<double>(kMaxEpochsPerPass))
    throw SettingError("expected at least 1/" + std::to_string(kMaxEpochsPerPass) + " (" +
                       shortest(1.0 / static_cast<double>(kMaxEpochsPerPass)) + "), got " +
                       shortest(fraction) + ": a pass may take at most " +
                       std::to_string(kMaxEpochsPerPass) + " epochs");
  if (std::abs(epochs * fraction - 1.0) > 1e-9)
    throw SettingError("expected 1 divided by a whole number (0.5, 0.25, ...), got " +
                       shortest(fraction) +
                       ": each epoch reads one of 1 / fraction equal chunks of the source");
  return static_cast<std::uint64_t>(epochs);
}

constexpr std::string_view kMixKey = "source.mix";
constexpr std::string_view kTemplateVariablesKey = "tokenizer.template_variables";

// A TOML value as JSON: tables are objects, arrays lists.
nlohmann::json json_of(const toml::node& node, const std::string& key) {
  if (const auto* table = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [name, value] : *table)
      object[std::string(name.str())] = json_of(value, key + "." + std::string(name.str()));
    return object;
  }
  if (const auto* array = node.as_array()) {
    nlohmann::json items = nlohmann::json::array();
    for (std::size_t i = 0; i < array->size(); ++i)
      items.push_back(json_of(*array->get(i), key + "[" + std::to_string(i) + "]"));
    return items;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) {
    if (!std::isfinite(f->get()))
      throw SettingError(key + " = " + shortest(f->get()) + ": has no JSON form");
    return f->get();
  }
  throw SettingError(key + ": a TOML date or time has no JSON form; write it as a string");
}

// [tokenizer.template_variables]: each key a variable, its value as JSON text.
void apply_template_variables(const toml::node& value, std::string_view source,
                              std::map<std::string, std::string>& variables) {
  const auto* table = value.as_table();
  if (!table)
    throw ConfigFileError(location(source, value.source()), std::string(kTemplateVariablesKey),
                          "expected a table of variables, e.g. { enable_thinking = false }");
  for (const auto& [name, variable] : *table) {
    const std::string key = std::string(kTemplateVariablesKey) + "." + std::string(name.str());
    try {
      variables[std::string(name.str())] = json_of(variable, key).dump();
    } catch (const SettingError& e) {
      throw ConfigFileError(location(source, variable.source()), key, e.what());
    }
  }
}

// `[pipeline] mode`: true for "evaluation", false for "training".
bool evaluation_mode(const toml::node& node) {
  const std::string mode = text(node);
  if (mode != "training" && mode != "evaluation")
    throw SettingError("expected \"training\" or \"evaluation\", not \"" + mode + "\"");
  return mode == "evaluation";
}

// An evaluation reads every record of every source once each epoch, in file order, so that
// every evaluation sees the same samples and each exactly once over the ranks.
void apply_evaluation_mode(const toml::table& root, std::string_view source,
                           PipelineConfig& config) {
  const auto refuse = [&](const toml::node& node, const std::string& key, const std::string& why) {
    throw ConfigFileError(location(source, node.source()), key,
                          why +
                              " (pipeline.mode = \"evaluation\" reads every record once an "
                              "epoch, in file order)");
  };
  if (const auto* shuffle = root.at_path("source.shuffle").node(); shuffle && boolean(*shuffle))
    refuse(*shuffle, "source.shuffle", "an evaluation does not shuffle");
  if (const auto* mix = root.at_path("source.mix").as_array())
    for (std::size_t i = 0; i < mix->size(); ++i)
      for (const char* key : {"epochs_per_pass", "fraction"})
        if (const auto* table = mix->get(i)->as_table();
            table && table->contains(key) && config.source.mix[i].epochs_per_pass != 1)
          refuse(*table->get(key), "source.mix[" + std::to_string(i) + "]." + key,
                 "an evaluation reads each source whole");
  config.source.shuffle = false;
}

std::map<std::string, TableSetters, std::less<>> table_setters(
    const std::filesystem::path& base_dir) {
  std::map<std::string, TableSetters, std::less<>> tables;
  tables["source"] = {
      {"files", [base_dir](const toml::node& n,
                           PipelineConfig& c) { c.source.files = file_list(n, base_dir); }},
      {"image_root",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.image_root = resolved(base_dir, text(n));
       }},
      {"index_cache",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.index_cache = resolved(base_dir, text(n));
       }},
      {"conversation_member",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.reader.conversation_member = text(n);
       }},
      {"shuffle", [](const toml::node& n, PipelineConfig& c) { c.source.shuffle = boolean(n); }},
      {"split",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.split = name_of<ShardSplit>(n, parse_split, "contiguous, strided");
       }},
      {"max_record_bytes",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.reader.max_record_bytes = integer(n, 1, std::uint64_t{1} << 40);
       }},
      {"on_bad_record",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.on_bad_record = name_of<BadRecordPolicy>(n, parse_bad_record, "skip, fail");
       }},
  };
  // One [[source.mix]] entry, a further source; the setters fill the entry last added.
  tables[std::string(kMixKey)] = {
      {"files",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().files = file_list(n, base_dir);
       }},
      {"epochs_per_pass",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().epochs_per_pass = integer(n, 1, kMaxEpochsPerPass);
       }},
      {"fraction",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().epochs_per_pass = epochs_per_pass_of_fraction(number(n));
       }},
      // This source's records templated apart from [tokenizer]'s.
      {"template",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().templating.chat_template =
             name_of<ChatTemplate>(n, parse_chat_template, "chatml, llama2, jinja");
       }},
      {"template_file",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().templating.template_file = resolved(base_dir, text(n));
       }},
      {"template_name",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().templating.template_name = text(n);
       }},
      {"system_prompt",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.mix.back().templating.system_prompt = text(n);
       }},
  };
  // A table inside [source]: its keys are source.remote.*.
  tables["source.remote"] = {
      {"cache_dir",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.remote.cache_dir = resolved(base_dir, text(n));
       }},
      {"cache_bytes",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.remote.cache_bytes = integer(n, 0, std::uint64_t{1} << 50);
       }},
      {"block_bytes",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.remote.block_bytes = integer(n, 4096, std::uint64_t{1} << 30);
       }},
      {"request_timeout_ms",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.remote.request_timeout = std::chrono::milliseconds(integer(n, 1, 86'400'000));
       }},
      {"attempts",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.remote.attempts = static_cast<std::uint32_t>(integer(n, 1, 100));
       }},
      {"backoff_ms",
       [](const toml::node& n, PipelineConfig& c) {
         c.source.remote.backoff = std::chrono::milliseconds(integer(n, 0, 600'000));
       }},
      {"ca_file",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.source.remote.ca_file = resolved(base_dir, text(n));
       }},
  };
  tables["tokenizer"] = {
      {"model", [base_dir](const toml::node& n,
                           PipelineConfig& c) { c.tokenizer.model = resolved(base_dir, text(n)); }},
      {"format",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.format = name_of<TokenizerFormat>(
             n, parse_tokenizer_format, "auto, sentencepiece, tokenizer.json, tiktoken");
       }},
      {"template",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.chat_template =
             name_of<ChatTemplate>(n, parse_chat_template, "chatml, llama2, jinja");
       }},
      {"template_file",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.template_file = resolved(base_dir, text(n));
       }},
      {"template_name",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.template_name = text(n); }},
      {"bos_token",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.bos_token = text(n); }},
      {"eos_token",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.eos_token = text(n); }},
      {"tiktoken_preset", [](const toml::node& n,
                             PipelineConfig& c) { c.tokenizer.options.tiktoken_preset = text(n); }},
      // A table, read by apply_template_variables; listed here as a key of [tokenizer].
      {"template_variables", [](const toml::node&, PipelineConfig&) {}},
      {"template_date",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.template_date = text(n); }},
      {"image_content",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.image_content =
             name_of<ImageContent>(n, parse_image_content, "parts, text");
       }},
      {"image_text",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.image_text = text(n); }},
      {"system_prompt",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.default_system_prompt = text(n);
       }},
      {"add_bos",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.add_bos = boolean(n); }},
      {"image_piece",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.options.image_piece = text(n); }},
      {"vision_start_piece",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.vision_start_piece = text(n);
       }},
      {"vision_end_piece",
       [](const toml::node& n, PipelineConfig& c) {
         c.tokenizer.options.vision_end_piece = text(n);
       }},
      {"workers",
       [](const toml::node& n, PipelineConfig& c) { c.tokenizer.workers = integer32(n, 1); }},
  };
  tables["images"] = {
      {"workers",
       [](const toml::node& n, PipelineConfig& c) { c.images.workers = integer32(n, 1); }},
      {"patch_size", [](const toml::node& n,
                        PipelineConfig& c) { c.images.geometry.patch_size = integer32(n, 1); }},
      {"merge_size", [](const toml::node& n,
                        PipelineConfig& c) { c.images.geometry.merge_size = integer32(n, 1); }},
      {"min_pixels",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.geometry.min_pixels = integer(n, 1, std::uint64_t{1} << 30);
       }},
      {"max_pixels",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.geometry.max_pixels = integer(n, 1, std::uint64_t{1} << 30);
       }},
      {"max_source_pixels",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.decoder_limits.max_source_pixels = integer(n, 1, std::uint64_t{1} << 40);
       }},
      {"max_source_side",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.decoder_limits.max_source_side = integer32(n, 1);
       }},
      {"max_file_bytes",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.file_limits.max_file_bytes = integer(n, 1, std::uint64_t{1} << 40);
       }},
      {"reject_animated",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.decoder_limits.reject_animated = boolean(n);
       }},
      // Read after the table, so that the [images] keys beside it take precedence (below).
      {"preprocessor_config", [](const toml::node& n, PipelineConfig&) { (void)text(n); }},
      {"jpeg_dct_scaling",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.decoder_limits.jpeg_dct_scaling = boolean(n);
       }},
      {"pixel_values",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.pixel_values.dtype =
             name_of<PixelDtype>(n, parse_pixel_dtype, "uint8, float32, bfloat16");
       }},
      {"rescale_factor",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.pixel_values.rescale_factor = number(n);
       }},
      {"image_mean", [](const toml::node& n,
                        PipelineConfig& c) { c.images.pixel_values.image_mean = per_channel(n); }},
      {"image_std", [](const toml::node& n,
                       PipelineConfig& c) { c.images.pixel_values.image_std = per_channel(n); }},
      {"temporal_patch_size",
       [](const toml::node& n, PipelineConfig& c) {
         c.images.pixel_values.temporal_patch_size =
             static_cast<std::uint32_t>(integer(n, 1, kMaxTemporalPatchSize));
       }},
  };
  tables["pipeline"] = {
      {"mode", [](const toml::node& n, PipelineConfig&) { (void)evaluation_mode(n); }},
      {"reader_capacity",
       [](const toml::node& n, PipelineConfig& c) { c.flow.reader_capacity = integer32(n, 1); }},
      {"lookahead",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.lookahead = static_cast<std::uint32_t>(integer(n, 0, std::uint64_t{1} << 24));
       }},
      {"prefetch",
       [](const toml::node& n, PipelineConfig& c) { c.flow.prefetch = integer32(n, 1); }},
      {"layout",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.layout = name_of<BatchLayout>(n, parse_layout, "padded, packed");
       }},
      {"pad_id",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.pad_id = static_cast<std::int32_t>(integer(n, 0, 0x7fffffff));
       }},
      {"scheduler_threads",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.scheduler_threads = static_cast<std::uint32_t>(integer(n, 0, 256));
       }},
      {"round_timeout_ms",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.round_timeout = std::chrono::milliseconds(integer(n, 1, std::uint64_t{1} << 40));
       }},
      {"stall_timeout_ms",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.stall_timeout = std::chrono::milliseconds(integer(n, 0, std::uint64_t{1} << 40));
       }},
      {"worker_jitter_us",
       [](const toml::node& n, PipelineConfig& c) {
         c.flow.worker_jitter_us = static_cast<std::uint32_t>(integer(n, 0, 1'000'000));
       }},
  };
  const auto milliseconds = [](const toml::node& n) {
    return std::chrono::milliseconds(integer(n, 1, std::uint64_t{1} << 40));
  };
  tables["distributed"] = {
      {"heartbeat_interval_ms",
       [=](const toml::node& n, PipelineConfig& c) {
         c.distributed.heartbeat_interval = milliseconds(n);
       }},
      {"peer_timeout_ms", [=](const toml::node& n,
                              PipelineConfig& c) { c.distributed.peer_timeout = milliseconds(n); }},
      {"connect_timeout_ms",
       [=](const toml::node& n, PipelineConfig& c) {
         c.distributed.connect_timeout = milliseconds(n);
       }},
      {"store_timeout_ms",
       [=](const toml::node& n, PipelineConfig& c) {
         c.distributed.store_timeout = milliseconds(n);
       }},
      {"exchange_timeout_ms",
       [=](const toml::node& n, PipelineConfig& c) {
         c.distributed.exchange_timeout = milliseconds(n);
       }},
      {"flight_recorder_rounds",
       [](const toml::node& n, PipelineConfig& c) {
         c.distributed.flight_recorder_rounds =
             static_cast<std::uint32_t>(integer(n, 0, 1'000'000));
       }},
      {"flight_recorder_dir",
       [base_dir](const toml::node& n, PipelineConfig& c) {
         c.distributed.flight_recorder_dir = resolved(base_dir, text(n));
       }},
  };
  tables["metrics"] = {
      {"enabled", [](const toml::node& n, PipelineConfig& c) { c.metrics.enabled = boolean(n); }},
      {"address", [](const toml::node& n, PipelineConfig& c) { c.metrics.address = text(n); }},
      {"port",
       [](const toml::node& n, PipelineConfig& c) {
         c.metrics.port = static_cast<std::uint16_t>(integer(n, 0, 65535));
       }},
  };
  return tables;
}

// "unknown key", saying where a key of that name belongs when other tables have it: "unknown key;
// it is a [tokenizer] key".
std::string unknown_key(std::string_view table, std::string_view key) {
  std::vector<std::string> owners;
  for (const auto& full : pipeline_config_keys()) {
    const auto dot = full.rfind('.');
    const std::string_view owner(full.data(), dot);
    if (std::string_view(full).substr(dot + 1) != key || owner == table) continue;
    owners.push_back(owner == "stage" || owner == kMixKey ? "[[" + std::string(owner) + "]]"
                                                          : "[" + std::string(owner) + "]");
  }
  if (owners.empty()) return "unknown key";
  std::string message = "unknown key; it is a " + owners[0];
  for (std::size_t i = 1; i < owners.size(); ++i)
    message += (i + 1 == owners.size() ? " or " : ", ") + owners[i];
  return message + " key";
}

}  // namespace

PipelineConfig PipelineConfig::from_toml(std::string_view document, std::string_view source,
                                         const std::filesystem::path& base_dir) {
  const toml::table root = toml_document::parse(document, source);
  PipelineConfig config;
  // A key of another table in [batching] is named as such before the batching settings reject it.
  if (const auto* batching = root.get_as<toml::table>("batching")) {
    const auto names = batching_setting_names();
    for (const auto& [key, value] : *batching) {
      if (std::find(names.begin(), names.end(), key.str()) != names.end()) continue;
      const std::string message = unknown_key("batching", key.str());
      if (message != "unknown key")
        throw ConfigFileError(location(source, value.source()),
                              "batching." + std::string(key.str()), message);
    }
  }
  config.batching = batching_config_from_toml(document, source);
  // Unless the file says otherwise, the layout follows the budget mode: a packed budget is only
  // kept by a packed layout.
  if (config.batching.budget_mode == BudgetMode::packed) config.flow.layout = BatchLayout::packed;
  const auto tables = table_setters(base_dir);
  std::function<void(const TableSetters&, const toml::table&, const std::string&)> apply;
  // Each [[source.mix]] entry adds a source; its keys are named source.mix[i].key.
  const auto apply_mix = [&](const toml::node& value, const std::string& key) {
    const auto* entries = value.as_array();
    if (!entries || !entries->is_array_of_tables())
      throw ConfigFileError(location(source, value.source()), key,
                            "expected [[source.mix]] tables, each a further source with its "
                            "files and epochs_per_pass");
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const auto& entry = *entries->get(i)->as_table();
      const std::string name = key + "[" + std::to_string(i) + "]";
      if (const auto* weight = entry.get("weight"))
        throw ConfigFileError(location(source, weight->source()), name + ".weight",
                              "weights are not supported: a source read more than once in an "
                              "epoch would repeat sample ids, and every id is read at most once "
                              "an epoch; read the other sources less often instead (their "
                              "epochs_per_pass above 1), or this one with epochs_per_pass or "
                              "fraction = 1/n");
      if (entry.contains("epochs_per_pass") && entry.contains("fraction"))
        throw ConfigFileError(location(source, entry.get("fraction")->source()), name + ".fraction",
                              "set either epochs_per_pass or fraction, not both");
      config.source.mix.emplace_back();
      apply(tables.find(kMixKey)->second, entry, name);
    }
  };
  // Sets the keys of `table` ([name]); a table inside it ([name.inner]) has setters of its own.
  apply = [&](const TableSetters& setters, const toml::table& table, const std::string& name) {
    for (const auto& [key, value] : table) {
      const std::string full_key = name + "." + std::string(key.str());
      if (full_key == kMixKey) {
        apply_mix(value, full_key);
        continue;
      }
      if (full_key == kTemplateVariablesKey) {
        apply_template_variables(value, source, config.tokenizer.options.template_variables);
        continue;
      }
      if (const auto* inner = value.as_table()) {
        const auto inner_setters = tables.find(full_key);
        if (inner_setters == tables.end())
          throw ConfigFileError(location(source, value.source()), full_key, "unknown table");
        apply(inner_setters->second, *inner, full_key);
        continue;
      }
      const auto setter = setters.find(key.str());
      if (setter == setters.end())
        throw ConfigFileError(location(source, value.source()), full_key,
                              unknown_key(name, key.str()));
      try {
        setter->second(value, config);
      } catch (const SettingError& e) {
        throw ConfigFileError(location(source, value.source()), full_key, e.what());
      }
    }
  };
  for (const auto& [name, node] : root) {
    if (name.str() == "batching") continue;
    if (name.str() == "stage") {
      config.stages = stage_configs_from_toml(node, source, base_dir);
      continue;
    }
    const auto setters = tables.find(name.str());
    if (setters == tables.end() || name.str().find('.') != std::string_view::npos)
      throw ConfigFileError(location(source, node.source()), std::string(name.str()),
                            "unknown table (expected source, tokenizer, images, batching, "
                            "pipeline, distributed or metrics, or [[stage]] entries)");
    const auto* table = node.as_table();
    if (!table)
      throw ConfigFileError(location(source, node.source()), std::string(name.str()),
                            "expected a table");
    apply(setters->second, *table, std::string(name.str()));
  }
  if (const auto* images = root.get_as<toml::table>("images")) {
    if (const auto* file = images->get("preprocessor_config")) {
      std::set<std::string> explicit_keys;
      for (const auto& [key, value] : *images) explicit_keys.insert(std::string(key.str()));
      try {
        apply_preprocessor_config(read_preprocessor_config(resolved(base_dir, text(*file))),
                                  explicit_keys, config.images.geometry,
                                  config.images.pixel_values);
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        throw ConfigFileError(location(source, file->source()), e.field(),
                              message.substr(e.field().size() + 2));
      }
    }
  }
  if (const auto* mode = root.at_path("pipeline.mode").node(); mode && evaluation_mode(*mode))
    apply_evaluation_mode(root, source, config);
  // A template file means the model's Jinja template unless `template` says otherwise (which
  // validation then refuses, naming both keys).
  if (const auto* tokenizer = root["tokenizer"].as_table();
      tokenizer && tokenizer->contains("template_file") && !tokenizer->contains("template"))
    config.tokenizer.options.chat_template = ChatTemplate::jinja;
  try {
    validate(config);
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    throw ConfigFileError(std::string(source), e.field(), message.substr(e.field().size() + 2));
  }
  return config;
}

std::vector<std::string> pipeline_config_keys() {
  std::vector<std::string> keys;
  for (const auto& [table, setters] : table_setters({}))
    for (const auto& [key, setter] : setters) keys.push_back(table + "." + key);
  for (const auto name : batching_setting_names()) keys.push_back("batching." + std::string(name));
  for (const auto* key :
       {"name", "kind", "type", "plugin", "workers", "version", "reasons", "params"})
    keys.push_back("stage." + std::string(key));
  return keys;
}

PipelineConfig PipelineConfig::from_toml_file(const std::filesystem::path& file) {
  return from_toml(toml_document::read(file), file.string(), file.parent_path());
}

}  // namespace odbatch
