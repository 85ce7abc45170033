#pragma once
// What every actor of one epoch shares: the pipeline's resources, the epoch's shard and start (all
// read-only once the actors run), where they report (the batch queue to the trainer, counters,
// the ledger), and the epoch's single failure path. Actors keep their state to themselves.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "abort_hook.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/batch/bounded_queue.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/config/pipeline_graph.hpp"
#include "odbatch/core/checkpoint.hpp"
#include "odbatch/core/resume_plan.hpp"
#include "odbatch/core/round_record.hpp"
#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/flight_recorder.hpp"
#include "odbatch/image/image_buffer_pool.hpp"
#include "odbatch/metrics/ledger_writer.hpp"
#include "odbatch/metrics/pipeline_stats.hpp"
#include "odbatch/proto_msgs/actor_interfaces.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/epoch_shard.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/source/shard_sequence.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "user_stages.hpp"

namespace odbatch::actors {

// A batch on its way to the trainer, with the record of the round that planned it: the trainer's
// thread makes its checkpoint from the last batch it took.
struct QueuedBatch {
  std::shared_ptr<const Batch> batch;
  std::shared_ptr<const RoundRecord> round;
};

using BatchQueue = BoundedQueue<QueuedBatch>;

// Built once per pipeline; immutable afterwards and shared by every epoch.
struct PipelineResources {
  PipelineConfig config;
  std::shared_ptr<const DatasetIndex> index;
  // The sources each epoch mixes (source.mix); empty: every epoch reads every record.
  std::vector<MixedSource> mix;
  std::shared_ptr<const RecordReader> records;
  std::shared_ptr<const ChatTokenizer> tokenizer;
  // Per source (0: source.files, i: the i-th [[source.mix]] entry): `tokenizer`, or the one its
  // template overrides make.
  std::vector<std::shared_ptr<const ChatTokenizer>> source_tokenizers;
  // Decoded images' pixel buffers, reused from epoch to epoch.
  std::shared_ptr<ImageBufferPool> image_buffers;
  // The user's record and sample stages ([[stage]]), their instances kept across epochs.
  UserStages stages;
  // The actors each epoch spawns.
  PipelineGraph graph;
  // The batch-deciding settings: every rank's must match at each epoch's first round, and a
  // checkpoint records them for its resume.
  std::vector<RunSetting> settings;
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
};

// A user stage's pool: its dispatcher and workers.
struct RecordStagePool {
  record_stage_dispatcher_actor dispatcher;
  std::vector<record_stage_worker_actor> workers;
};
struct SampleStagePool {
  sample_stage_dispatcher_actor dispatcher;
  std::vector<sample_stage_worker_actor> workers;
};

// The epoch's actors, filled in before any of them starts.
struct Wiring {
  reader_actor reader;
  joiner_actor joiner;
  packer_actor packer;
  aligner_actor aligner;
  coordinator_actor coordinator;
  emitter_actor emitter;
  std::vector<tokenizer_worker_actor> tokenizers;
  std::vector<image_decoder_worker_actor> image_decoders;
  std::vector<RecordStagePool> record_stages;  // in the order they run
  std::vector<SampleStagePool> sample_stages;

  std::vector<caf::actor> all() const;
};

class EpochContext {
 public:
  EpochContext(std::shared_ptr<const PipelineResources> resources, std::uint64_t epoch,
               ShardSequence shard, EpochStart start, std::shared_ptr<BatchQueue> queue,
               PipelineStats& stats, LedgerWriter* ledger, Collective& collective,
               FlightRecorder* recorder, AbortHook* abort_hook);

  const PipelineResources& resources() const { return *resources_; }
  const PipelineConfig& config() const { return resources_->config; }
  std::uint64_t epoch() const { return epoch_; }
  const ShardSpec& shard_spec() const { return shard_spec_; }
  const ShardSequence& shard() const { return shard_; }
  const EpochStart& start() const { return start_; }
  BatchQueue& queue() { return *queue_; }
  PipelineStats& stats() { return stats_; }
  LedgerWriter* ledger() { return ledger_; }
  Collective& collective() { return collective_; }
  FlightRecorder* recorder() { return recorder_; }
  Wiring& wiring() { return wiring_; }
  std::chrono::steady_clock::time_point started() const { return started_; }

  // Records a rejection: counted by reason, written to the ledger, logged (the epoch's first few
  // as warnings, the rest at debug), and under on_bad_record = fail turned into the epoch's
  // failure.
  void reject(const Rejection& rejection);

  // Ends the epoch with an error the trainer's next_batch() rethrows; the first failure wins.
  // Wakes everything that could wait: the batch queue, the collective, and every actor. Writes
  // the flight recorder's rounds, when there is one, and says where; calls the trainer's abort
  // hook.
  void fail(const std::string& reason,
            PipelineFailure::Cause cause = PipelineFailure::Cause::internal,
            std::optional<std::uint64_t> round = std::nullopt);
  bool failed() const { return failed_.load(); }

  // The trainer stops here, at an agreed step: from now on a failure (this rank's rounds ending
  // as the ranks leave) only stops the actors; it aborts nothing and calls no hook.
  void begin_departure() { departing_ = true; }

  // The epoch's number of steps: known once its last round is planned, when the emitter hears
  // of the epoch's end (before the trainer has taken the last batches); nullopt before.
  std::optional<std::uint64_t> total_steps() const {
    const auto steps = total_steps_.load();
    return steps == kStepsUnknown ? std::nullopt : std::optional<std::uint64_t>(steps);
  }
  void set_total_steps(std::uint64_t steps) { total_steps_.store(steps); }

  // Stops every actor of the epoch (after the end of the epoch, or on failure).
  void stop_actors();

  // Whether this rank's coordinator is in a round (waiting for its peers, or exchanging with
  // them): then the ranks' deadlines, not this rank's stall watchdog, bound the wait.
  bool in_round() const { return in_round_.load(); }
  void set_in_round(bool in_round) { in_round_.store(in_round); }

 private:
  std::shared_ptr<const PipelineResources> resources_;
  std::uint64_t epoch_;
  ShardSpec shard_spec_;
  ShardSequence shard_;
  EpochStart start_;
  std::shared_ptr<BatchQueue> queue_;
  PipelineStats& stats_;
  LedgerWriter* ledger_;
  Collective& collective_;
  FlightRecorder* recorder_;
  AbortHook* abort_hook_;
  Wiring wiring_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> in_round_{false};
  std::atomic<bool> departing_{false};
  std::atomic<std::uint64_t> rejections_{0};
  static constexpr std::uint64_t kStepsUnknown = ~std::uint64_t{0};
  std::atomic<std::uint64_t> total_steps_{kStepsUnknown};
  std::once_flag stop_once_;
};

using EpochContextPtr = std::shared_ptr<EpochContext>;

// Routes an actor's escaping exception to the epoch's failure, naming the actor.
void report_exceptions_to(caf::scheduled_actor* self, EpochContextPtr context,
                          std::string actor_name);

}  // namespace odbatch::actors
