#pragma once
// The whole pipeline's configuration: its stages (an actor graph: reader, tokenizer pool, image
// decoder pool, joiner, packer, aligner, coordinator, emitter, and the user's record and sample
// stages), their pool sizes and capacities, and every stage's options. Loaded from a TOML file
// (docs/pipeline-toml.md) or built in code.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/batch/batch.hpp"
#include "odbatch/config/stage_config.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/core/epoch_selection.hpp"
#include "odbatch/dist/distributed_config.hpp"
#include "odbatch/image/image_file_limits.hpp"
#include "odbatch/image/jpeg_decoder_limits.hpp"
#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/epoch_shard.hpp"
#include "odbatch/source/record_reader_options.hpp"
#include "odbatch/source/remote_source_options.hpp"
#include "odbatch/text/tokenizer_options.hpp"

namespace odbatch {

// What happens to a record that cannot become a sample: `skip` rejects it with its reason in the
// ledger and goes on; `fail` stops the epoch with that reason.
enum class BadRecordPolicy : std::uint8_t { skip, fail };
std::string_view to_string(BadRecordPolicy policy);

// How a source's records are templated where it differs from [tokenizer]: a [[source.mix]]
// entry's own chat template or system prompt (unset: the [tokenizer] table's).
struct TemplateOverrides {
  std::optional<ChatTemplate> chat_template;
  std::optional<std::filesystem::path> template_file;
  std::optional<std::string> template_name;
  std::optional<std::string> system_prompt;

  bool empty() const {
    return !chat_template && !template_file && !template_name && !system_prompt;
  }
  friend bool operator==(const TemplateOverrides&, const TemplateOverrides&) = default;
};

// The most epochs a pass over a mixed source may take (2^32), so `fraction` is at least 2^-32.
inline constexpr std::uint64_t kMaxEpochsPerPass = std::uint64_t{1} << 32;

// A further source mixed into every epoch ([[source.mix]]): its records are read once every
// `epochs_per_pass` epochs, a chunk each epoch (odbatch/core/epoch_selection.hpp).
struct MixSourceConfig {
  std::vector<std::string> files;     // as SourceConfig::files
  std::uint64_t epochs_per_pass = 1;  // 1 to kMaxEpochsPerPass
  TemplateOverrides templating = TemplateOverrides();
};

struct SourceConfig {
  // JSONL, JSON array or tar shard files, glob and brace patterns, URLs, "@list" files. Read
  // whole every epoch.
  std::vector<std::string> files;
  // Further sources; their records' ids follow those of `files`, in order.
  std::vector<MixSourceConfig> mix;
  std::filesystem::path image_root;
  // Where tar shards' indexes are cached; empty: shards are indexed on every run.
  std::filesystem::path index_cache;
  // How files named by http(s):// URLs are read: block cache, timeouts, retries.
  RemoteSourceOptions remote;
  bool shuffle = true;
  ShardSplit split = ShardSplit::contiguous;
  RecordReaderOptions reader;
  BadRecordPolicy on_bad_record = BadRecordPolicy::skip;
};

// How the source's files are indexed: the tar index cache and remote-file options.
DatasetIndexOptions dataset_index_options(const SourceConfig& source);

// The index of source.files and then each source.mix entry's files.
DatasetIndex build_dataset_index(const SourceConfig& source);

// The sources each epoch mixes, over an index build_dataset_index() built: empty without
// source.mix, where every epoch reads every record.
std::vector<MixedSource> mixed_sources(const SourceConfig& source, const DatasetIndex& index);

struct TokenizerStageConfig {
  std::filesystem::path model;
  // max_seq_len, over_length and zero_labels are taken from the batching config.
  TokenizerOptions options;
  std::uint32_t workers = 2;
};

struct ImageStageConfig {
  VisionGeometryConfig geometry;
  JpegDecoderLimits decoder_limits;
  ImageFileLimits file_limits;
  // uint8 RGB (the default) or Qwen2-VL's normalised, patchified pixel_values, made in the
  // image-decoder workers.
  PixelValuesConfig pixel_values;
  std::uint32_t workers = 1;
};

struct FlowConfig {
  // Samples the reader may have handed to the worker pools beyond the lookahead: keeps the
  // workers busy while the joiner waits for a slow sample.
  std::uint32_t reader_capacity = 256;
  // Samples preprocessed ahead of the round being admitted, waiting in the joiner; the first
  // round's proposal waits until they are ready. Unset: sized automatically (reader_lookahead,
  // first_round_lookahead).
  std::optional<std::uint32_t> lookahead;
  std::uint32_t prefetch = 4;  // batches waiting for the trainer
  BatchLayout layout = BatchLayout::padded;
  // Fills padded positions (masked out) and is the dummy token of IDLE batches.
  std::int32_t pad_id = 0;
  // Scheduler threads for the event-based actors; 0: the number of cores.
  std::uint32_t scheduler_threads = 0;
  // Deadline for a round's proposal exchange once this rank is ready.
  std::chrono::milliseconds round_timeout{600'000};
  // How long next_batch() waits while this rank is not in a round and none of its stages
  // finishes an item (a stage that never returns, a read that never completes) before it fails
  // the epoch on every rank, naming what is in flight. 0: never.
  std::chrono::milliseconds stall_timeout{300'000};
  // Fault injection for determinism and stress tests: every tokenizer and image-decoder task is
  // delayed by a pseudo-random 0..worker_jitter_us microseconds (seeded by batching.seed, the
  // worker and the task), so parts reach the joiner in a different order. 0: no delay.
  std::uint32_t worker_jitter_us = 0;
};

// The Prometheus endpoint (docs/metrics.md): off unless enabled; serves GET /metrics on its own
// thread.
struct MetricsConfig {
  bool enabled = false;
  std::string address = "127.0.0.1";  // a numeric IPv4 or IPv6 address to bind
  // 0: a free port (Pipeline::metrics_port() says which); otherwise the rank binds port +
  // LOCAL_RANK, so that the ranks of one machine can share one pipeline file.
  std::uint16_t port = 0;
};

struct PipelineConfig {
  SourceConfig source;
  TokenizerStageConfig tokenizer;
  ImageStageConfig images;
  BatchingConfig batching;
  FlowConfig flow;
  DistributedConfig distributed;  // ranks that are processes
  MetricsConfig metrics;
  // User stages ([[stage]]), in the order each kind's stages run (docs/stages.md).
  std::vector<StageConfig> stages;

  // Reads a TOML file: tables [source], [tokenizer], [images], [batching], [pipeline],
  // [distributed], [metrics] and [[stage]] entries. Relative
  // paths are relative to the file's directory. Throws ConfigFileError naming file, line and key.
  static PipelineConfig from_toml_file(const std::filesystem::path& file);
  static PipelineConfig from_toml(std::string_view document, std::string_view source,
                                  const std::filesystem::path& base_dir);
};

// Every key a pipeline file may set, as "table.key", tables in file order.
std::vector<std::string> pipeline_config_keys();

// Throws ConfigError naming the first invalid field (as "table.key").
void validate(const PipelineConfig& config);

// The tokenizer options with the batching config's length and label policies applied; for
// `source` i > 0 (the i-th [[source.mix]] entry) with that entry's template overrides too.
TokenizerOptions effective_tokenizer_options(const PipelineConfig& config,
                                             std::uint32_t source = 0);

// How far the reader may run ahead of admission, beyond `flow.reader_capacity`: `flow.lookahead`,
// or the window when unset, so that a whole round's samples can be ready once the ramp is over.
std::uint32_t reader_lookahead(const PipelineConfig& config);

// Samples that must be ready behind the epoch's first round (`first_round`: 0, or the round a
// resume starts at) before it is proposed: `flow.lookahead`, or when unset the admission of the
// round after it, so that round's samples are waiting when the first round's batches are out.
// Under the short warm-up that is window/8 behind window/16, not a whole window behind another.
std::uint32_t first_round_lookahead(const PipelineConfig& config, std::uint64_t first_round);

}  // namespace odbatch
