#include "odbatch/config/rank_local_settings.hpp"

#include <array>

namespace odbatch {
namespace {

constexpr std::string_view kTiming =
    "only flow control: batches are a function of data, settings, seed and world size, never of "
    "timing (the joiner restores shard order)";
constexpr std::string_view kDeadline =
    "a deadline or liveness interval: it decides when a "
    "failure is declared, never what a batch holds";

constexpr std::string_view kRemoteCache =
    "how a remote file's bytes are cached (blocks named by the file's URL and version): what is "
    "fetched, never what is read; the dataset's fingerprint is compared";

constexpr std::array kRankLocalKeys{
    RankLocalKey{"source.image_root",
                 "a path that may differ between machines (another mount point); what the "
                 "records reference and how images are sized are compared"},
    RankLocalKey{"source.index_cache",
                 "a cache of tar shard indexes, each checked against its shard's size and "
                 "modification time; the dataset's fingerprint is compared"},
    RankLocalKey{"source.remote.cache_dir", kRemoteCache},
    RankLocalKey{"source.remote.cache_bytes", kRemoteCache},
    RankLocalKey{"source.remote.block_bytes", kRemoteCache},
    RankLocalKey{"source.remote.request_timeout_ms", kDeadline},
    RankLocalKey{"source.remote.attempts", kDeadline},
    RankLocalKey{"source.remote.backoff_ms", kDeadline},
    RankLocalKey{"images.preprocessor_config",
                 "a path that may differ between machines; the values read from it are the "
                 "images.* settings, which are compared"},
    RankLocalKey{"source.remote.ca_file",
                 "a path that may differ between machines; a server it does not verify fails "
                 "the rank, it never changes the bytes read"},
    RankLocalKey{"tokenizer.workers", kTiming},
    RankLocalKey{"images.workers", kTiming},
    RankLocalKey{"pipeline.reader_capacity", kTiming},
    RankLocalKey{"pipeline.lookahead", kTiming},
    RankLocalKey{"pipeline.prefetch", kTiming},
    RankLocalKey{"pipeline.scheduler_threads", kTiming},
    RankLocalKey{"pipeline.worker_jitter_us", kTiming},
    RankLocalKey{"pipeline.round_timeout_ms", kDeadline},
    RankLocalKey{"pipeline.stall_timeout_ms", kDeadline},
    RankLocalKey{"distributed.heartbeat_interval_ms", kDeadline},
    RankLocalKey{"distributed.peer_timeout_ms", kDeadline},
    RankLocalKey{"distributed.connect_timeout_ms", kDeadline},
    RankLocalKey{"distributed.store_timeout_ms", kDeadline},
    RankLocalKey{"distributed.exchange_timeout_ms", kDeadline},
    RankLocalKey{"distributed.flight_recorder_rounds", "diagnostics written by each rank"},
    RankLocalKey{"distributed.flight_recorder_dir", "diagnostics written by each rank"},
    RankLocalKey{"metrics.enabled", "each rank's own monitoring endpoint"},
    RankLocalKey{"metrics.address", "each rank's own monitoring endpoint"},
    RankLocalKey{"metrics.port", "each rank's own monitoring endpoint"},
    RankLocalKey{"stage.workers", kTiming},
    RankLocalKey{"stage.plugin",
                 "a path that may differ between machines; the stage's type, its version and "
                 "parameters are compared"},
    RankLocalKey{"stage.reasons",
                 "which reasons are exported at 0 before any occurs; what a stage rejects is "
                 "decided by its type, version and parameters, which are compared"},
};

}  // namespace

std::span<const RankLocalKey> rank_local_keys() {
  return kRankLocalKeys;
}

}  // namespace odbatch
