#include "odbatch/config/pipeline_config.hpp"

#include <arpa/inet.h>

#include <array>
#include <stdexcept>
#include <string>

#include "odbatch/core/warmup.hpp"

namespace odbatch {
namespace {

// Re-labels a sub-config's complaint with the table it lives in.
template <class Sub>
void validate_in(const Sub& sub, const std::string& table) {
  try {
    validate(sub);
  } catch (const ConfigError& e) {
    throw ConfigError(table + "." + e.field(), std::string(e.what()).substr(e.field().size() + 2));
  }
}

bool is_ip_address(const std::string& text) {
  std::array<unsigned char, 16> bytes{};
  return inet_pton(AF_INET, text.c_str(), bytes.data()) == 1 ||
         inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1;
}

}  // namespace

DatasetIndexOptions dataset_index_options(const SourceConfig& source) {
  return DatasetIndexOptions{source.index_cache, source.remote};
}

DatasetIndex build_dataset_index(const SourceConfig& source) {
  if (source.mix.empty()) return DatasetIndex::build(source.files, dataset_index_options(source));
  std::vector<std::vector<std::string>> sources{source.files};
  for (const auto& mixed : source.mix) sources.push_back(mixed.files);
  return DatasetIndex::build_sources(sources, dataset_index_options(source));
}

std::vector<MixedSource> mixed_sources(const SourceConfig& source, const DatasetIndex& index) {
  if (source.mix.empty()) return {};
  const auto counts = index.source_record_counts();
  if (counts.size() != source.mix.size() + 1)
    throw std::invalid_argument("the dataset index holds " + std::to_string(counts.size()) +
                                " sources, the config " + std::to_string(source.mix.size() + 1));
  std::vector<MixedSource> sources{{0, counts[0], 1}};
  for (std::size_t i = 0; i < source.mix.size(); ++i)
    sources.push_back({sources.back().first_id + sources.back().record_count, counts[i + 1],
                       source.mix[i].epochs_per_pass});
  return sources;
}

std::string_view to_string(BadRecordPolicy policy) {
  return policy == BadRecordPolicy::skip ? "skip" : "fail";
}

std::uint32_t reader_lookahead(const PipelineConfig& config) {
  return config.flow.lookahead.value_or(config.batching.window);
}

std::uint32_t first_round_lookahead(const PipelineConfig& config, std::uint64_t first_round) {
  if (config.flow.lookahead) return *config.flow.lookahead;
  return admission_threshold(config.batching, first_round + 1);
}

TokenizerOptions effective_tokenizer_options(const PipelineConfig& config, std::uint32_t source) {
  TokenizerOptions options = config.tokenizer.options;
  if (source > 0 && source <= config.source.mix.size()) {
    const auto& overrides = config.source.mix[source - 1].templating;
    if (overrides.template_file) {
      options.template_file = *overrides.template_file;
      // A template file of its own means the model's Jinja template, as in [tokenizer].
      options.chat_template = ChatTemplate::jinja;
    }
    if (overrides.chat_template) options.chat_template = *overrides.chat_template;
    if (overrides.template_name) options.template_name = *overrides.template_name;
    if (overrides.system_prompt) options.default_system_prompt = *overrides.system_prompt;
  }
  options.max_seq_len = config.batching.max_seq_len;
  options.over_length = config.batching.over_length;
  options.zero_labels = config.batching.zero_labels;
  return options;
}

void validate(const PipelineConfig& c) {
  if (c.source.files.empty()) throw ConfigError("source.files", "names no file");
  for (std::size_t i = 0; i < c.source.mix.size(); ++i) {
    const std::string key = "source.mix[" + std::to_string(i) + "]";
    if (c.source.mix[i].files.empty()) throw ConfigError(key + ".files", "names no file");
    if (c.source.mix[i].epochs_per_pass == 0 || c.source.mix[i].epochs_per_pass > kMaxEpochsPerPass)
      throw ConfigError(key + ".epochs_per_pass",
                        "must be between 1 and " + std::to_string(kMaxEpochsPerPass));
  }
  if (c.source.reader.max_record_bytes == 0)
    throw ConfigError("source.max_record_bytes", "must be at least 1");
  if (c.source.reader.conversation_member.empty() ||
      c.source.reader.conversation_member.find('/') != std::string::npos)
    throw ConfigError("source.conversation_member",
                      "must be a member extension such as \"json\" (no '/')");
  if (c.tokenizer.model.empty()) throw ConfigError("tokenizer.model", "names no model file");
  if (c.tokenizer.workers == 0) throw ConfigError("tokenizer.workers", "must be at least 1");
  if (c.images.workers == 0) throw ConfigError("images.workers", "must be at least 1");
  if (c.flow.reader_capacity == 0)
    throw ConfigError("pipeline.reader_capacity", "must be at least 1");
  if (c.flow.prefetch == 0) throw ConfigError("pipeline.prefetch", "must be at least 1");
  if (c.flow.round_timeout.count() <= 0)
    throw ConfigError("pipeline.round_timeout_ms", "must be positive");
  validate_in(c.batching, "batching");
  validate_stages(c.stages);
  // A group formed under a packed budget (sum of lengths <= token_budget) collated as padded
  // rows takes rows x longest tokens: many times the budget the batch was meant to fit.
  if (c.batching.budget_mode == BudgetMode::packed && c.flow.layout == BatchLayout::padded)
    throw ConfigError("pipeline.layout",
                      "\"padded\" cannot carry batches grouped under batching.budget_mode = "
                      "\"packed\": rows x longest would exceed batching.token_budget; use layout "
                      "= \"packed\" (the default for that budget mode) or budget_mode = "
                      "\"padded\"");
  validate_in(c.distributed, "distributed");
  validate_in(effective_tokenizer_options(c), "tokenizer");
  for (std::uint32_t i = 0; i < c.source.mix.size(); ++i)
    if (!c.source.mix[i].templating.empty())
      validate_in(effective_tokenizer_options(c, i + 1), "source.mix[" + std::to_string(i) + "]");
  validate_in(c.images.geometry, "images");
  validate_in(c.images.decoder_limits, "images");
  validate_in(c.images.file_limits, "images");
  validate_in(c.images.pixel_values, "images");
  if (!is_ip_address(c.metrics.address))
    throw ConfigError("metrics.address",
                      "expected a numeric IPv4 or IPv6 address, got \"" + c.metrics.address + "\"");
}

}  // namespace odbatch
