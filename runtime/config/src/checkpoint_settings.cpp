#include "odbatch/config/checkpoint_settings.hpp"

#include <array>
#include <cstdio>
#include <map>
#include <string>

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/source/regular_file.hpp"
#include "odbatch/text/chat_template_config.hpp"
#include "odbatch/text/chat_tokenizer.hpp"

namespace odbatch {
namespace {

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string content_hash(const std::string& bytes) {
  return hex(StableHasher(0x746f6b656e697a65ULL)  // "tokenize"
                 .add(bytes)
                 .digest());
}

// A template file, read as the tokenizer reads it: a FIFO, a directory or a file past the size
// cap is a ConfigError naming the setting that gave it and the path, never a hang.
std::string template_file_hash(const std::filesystem::path& file, const std::string& setting) {
  try {
    return content_hash(read_regular_file(file.string(), kMaxTemplateFileBytes));
  } catch (const FileReadError& e) {
    throw ConfigError(setting, e.what());
  }
}

std::string flag(bool value) {
  return value ? "true" : "false";
}

// Round-trip exact: ranks whose numbers differ in the last bit differ here too.
std::string exact(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string exact(const std::array<double, 3>& values) {
  return "[" + exact(values[0]) + ", " + exact(values[1]) + ", " + exact(values[2]) + "]";
}

// "37 records every epoch; 100 records over 3 epochs": each source's records and epochs per pass,
// source.files first.
std::string describe_mix(const std::vector<MixedSource>& sources) {
  std::string text;
  for (const auto& source : sources) {
    if (!text.empty()) text += "; ";
    text += std::to_string(source.record_count) + " records " +
            (source.epochs_per_pass == 1
                 ? std::string("every epoch")
                 : "over " + std::to_string(source.epochs_per_pass) + " epochs");
  }
  return text;
}

// `{"date_string": "26 Jul 2024", "enable_thinking": false}`; "(none)" without any.
std::string template_variables_text(const std::map<std::string, std::string>& variables) {
  if (variables.empty()) return "(none)";
  std::string text = "{";
  for (const auto& [name, json] : variables)
    text += (text.size() > 1 ? ", \"" : "\"") + name + "\": " + json;
  return text + "}";
}

}  // namespace

std::vector<RunSetting> checkpoint_settings(const PipelineConfig& config,
                                            const DatasetIndex& index) {
  const auto& b = config.batching;
  const auto& t = config.tokenizer.options;
  const auto& images = config.images;
  const auto n = [](auto value) { return std::to_string(value); };
  const auto s = [](auto value) { return std::string(to_string(value)); };
  std::vector<RunSetting> settings{
      {"dataset", hex(index.fingerprint()) + " (" + n(index.record_count()) + " records)"},
      {"source.shuffle", flag(config.source.shuffle)},
      {"source.split", config.source.split == ShardSplit::contiguous ? "contiguous" : "strided"},
      {"source.on_bad_record", s(config.source.on_bad_record)},
      {"source.max_record_bytes", n(config.source.reader.max_record_bytes)},
      {"source.conversation_member", config.source.reader.conversation_member},
      {"tokenizer.model", content_hash(read_tokenizer_model_file(config.tokenizer.model))},
      {"tokenizer.format", s(t.format)},
      {"tokenizer.template", s(t.chat_template)},
      {"tokenizer.template_file",
       t.template_file.empty() ? "(none)"
                               : template_file_hash(t.template_file, "tokenizer.template_file")},
      {"tokenizer.template_name", t.template_name},
      {"tokenizer.bos_token", t.bos_token.value_or("(template file's)")},
      {"tokenizer.eos_token", t.eos_token.value_or("(template file's)")},
      {"tokenizer.tiktoken_preset", t.tiktoken_preset},
      {"tokenizer.template_date", t.template_date.value_or("(the day of the run)")},
      {"tokenizer.template_variables", template_variables_text(t.template_variables)},
      {"tokenizer.image_content", s(t.image_content)},
      {"tokenizer.image_text", t.image_text.value_or("(vision pieces)")},
      {"tokenizer.image_piece", t.image_piece},
      {"tokenizer.vision_start_piece", t.vision_start_piece},
      {"tokenizer.vision_end_piece", t.vision_end_piece},
      {"tokenizer.default_system_prompt", t.default_system_prompt.value_or("(none)")},
      {"tokenizer.add_bos", t.add_bos ? flag(*t.add_bos) : "(template's)"},
      {"images.patch_size", n(images.geometry.patch_size)},
      {"images.merge_size", n(images.geometry.merge_size)},
      {"images.min_pixels", n(images.geometry.min_pixels)},
      {"images.max_pixels", n(images.geometry.max_pixels)},
      {"images.max_source_pixels", n(images.decoder_limits.max_source_pixels)},
      {"images.max_source_side", n(images.decoder_limits.max_source_side)},
      {"images.max_file_bytes", n(images.file_limits.max_file_bytes)},
      {"images.reject_animated", flag(images.decoder_limits.reject_animated)},
      {"images.jpeg_dct_scaling", flag(images.decoder_limits.jpeg_dct_scaling)},
      {"images.pixel_values", s(images.pixel_values.dtype)},
      {"images.rescale_factor", exact(images.pixel_values.rescale_factor)},
      {"images.image_mean", exact(images.pixel_values.image_mean)},
      {"images.image_std", exact(images.pixel_values.image_std)},
      {"images.temporal_patch_size", n(images.pixel_values.temporal_patch_size)},
      {"batching.token_budget", n(b.token_budget)},
      {"batching.budget_mode", s(b.budget_mode)},
      {"batching.patch_budget", n(b.patch_budget)},
      {"batching.max_seq_len", n(b.max_seq_len)},
      {"batching.window", n(b.window)},
      {"batching.warmup", s(b.warmup)},
      {"batching.max_defer_rounds", n(b.max_defer_rounds)},
      {"batching.hold_pct", n(b.hold_pct)},
      {"batching.policy", s(b.policy)},
      {"batching.loss_scaling", s(b.loss_scaling)},
      {"batching.over_budget", s(b.over_budget)},
      {"batching.over_length", s(b.over_length)},
      {"batching.zero_labels", s(b.zero_labels)},
      {"batching.seed", n(b.seed)},
      {"pipeline.layout", s(config.flow.layout)},
      {"pipeline.pad_id", n(config.flow.pad_id)},
  };
  // Only a mixed dataset lists its sources, so checkpoints of unmixed ones stay as they were.
  if (const auto sources = mixed_sources(config.source, index); !sources.empty())
    settings.insert(settings.begin() + 1, {"source.mix", describe_mix(sources)});
  // A source's own templating, where its entry sets any.
  for (std::size_t i = 0; i < config.source.mix.size(); ++i) {
    const auto& overrides = config.source.mix[i].templating;
    const std::string key = "source.mix[" + std::to_string(i) + "].";
    if (overrides.chat_template)
      settings.push_back({key + "template", s(*overrides.chat_template)});
    if (overrides.template_file)
      settings.push_back({key + "template_file",
                          template_file_hash(*overrides.template_file, key + "template_file")});
    if (overrides.template_name)
      settings.push_back({key + "template_name", *overrides.template_name});
    if (overrides.system_prompt)
      settings.push_back({key + "system_prompt", *overrides.system_prompt});
  }
  return settings;
}

}  // namespace odbatch
