#pragma once
// The pipeline a trainer embeds: an actor graph that reads, tokenizes, decodes, groups and aligns
// samples into token-budgeted batches, one process per data-parallel rank.
//
//   odbatch::Pipeline pipe(odbatch::PipelineConfig::from_toml_file("pipeline.toml"),
//                          odbatch::DistEnv::from_env());
//   for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
//     pipe.start_epoch(epoch);
//     while (auto batch = pipe.next_batch()) { ... batch->step_info().loss_scale ... }
//   }
//
// Every rank yields the same number of batches per epoch (IDLE batches fill in where a rank has
// nothing), so the trainer's collectives stay aligned without DDP's Join. No CAF type appears here.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "odbatch/batch/batch.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/checkpoint.hpp"
#include "odbatch/dist/collective_factory.hpp"
#include "odbatch/metrics/pipeline_stats.hpp"
#include "odbatch/stage/stage_registry.hpp"

namespace odbatch {

struct PipelineOptions {
  // Writes every emitted step's sample ids and every rejection (see `odbatch audit`).
  std::optional<std::filesystem::path> ledger;
  // The trainer's abort hook (e.g. to call ncclCommAbort on its communicator): called once, from
  // a loader thread, with the reason, as soon as this rank's epoch fails or, with ranks in other
  // processes, as soon as any rank's failure aborts the run, even between rounds. It must not
  // call back into the Pipeline.
  std::function<void(const std::string& reason)> on_abort = nullptr;
  // Makes this rank's round collective (e.g. wrapping it to inject a fault, in tests); empty:
  // make_round_collective.
  CollectiveFactory collective = nullptr;
  // Stage types the pipeline file's [[stage]] entries without a plugin name by `type` (or by
  // name): the program's own stages (docs/stages.md).
  StageRegistry stages = StageRegistry();
};

// What next_batch() throws when the epoch failed: the reason (naming this rank and the epoch) and
// its cause, for trainers that react by kind.
class PipelineFailure : public std::runtime_error {
 public:
  enum class Cause : std::uint8_t {
    data,      // the dataset: an unusable file, a record rejected under on_bad_record = "fail"
    peer,      // the ranks cannot go on together: a rank failed, aborted, died or timed out
    aborted,   // abort() on this rank
    stalled,   // this rank's stages finished nothing for pipeline.stall_timeout_ms
    internal,  // anything else
  };
  PipelineFailure(Cause cause, const std::string& message,
                  std::optional<std::uint64_t> round = std::nullopt)
      : std::runtime_error(message), cause_(cause), round_(round) {}
  Cause cause() const { return cause_; }
  // The alignment round that failed, for a peer failure found in a round.
  std::optional<std::uint64_t> round() const { return round_; }

 private:
  Cause cause_;
  std::optional<std::uint64_t> round_;
};

class Pipeline {
 public:
  // Indexes the dataset and loads the tokenizer; throws on a bad config, dataset or model, with
  // the file and reason.
  Pipeline(PipelineConfig config, DistEnv dist = DistEnv::single(), PipelineOptions options = {});
  ~Pipeline();  // stops the actors of an unfinished epoch; never hangs
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // A pipeline that goes on where `checkpoint` (every rank's state(), joined) stood: its epoch
  // is started at the step the trainers had reached, and next_batch() yields what an
  // uninterrupted run would have from there. With the checkpoint's world size the batches are
  // the very same; with another, every sample the epoch had not emitted is emitted once, spread
  // over the new ranks. Every rank calls it with the same checkpoint. Throws CheckpointError
  // naming the setting when the dataset, the tokenizer or a batching setting differs (pool
  // sizes, capacities, prefetch, timeouts and the world size may change).
  static std::unique_ptr<Pipeline> resume(PipelineConfig config, DistEnv dist,
                                          const Checkpoint& checkpoint,
                                          PipelineOptions options = {});

  // This rank's part of a checkpoint at the current step boundary: after the batches the
  // trainer took (not those prepared ahead), small (window ids and ages, counters), from the
  // trainer's thread between next_batch() calls. Every rank saves its part at the same step;
  // join_checkpoint_parts() (or save_checkpoint()) makes one checkpoint of them; a rank that
  // stops after saving departs (depart()) so as not to abort the others. After an epoch's end it
  // names the next epoch's start. In an epoch resumed onto another world size it carries the
  // checkpoint the epoch came from. Throws std::logic_error after depart().
  Checkpoint state() const;

  // Starts (or restarts) an epoch: the shard is a function of seed, epoch, rank and world size.
  // A single rank may abandon an unfinished epoch this way; with several ranks every rank must
  // finish the epoch or the run must be aborted.
  void start_epoch(std::uint64_t epoch);

  // The next batch, blocking until it is ready; nullptr at the end of the epoch (after the same
  // number of batches on every rank). Throws PipelineFailure when the pipeline failed.
  std::shared_ptr<const Batch> next_batch();

  // Leaves the run at an agreed step (e.g. max_steps): every rank calls it after taking the same
  // number of batches of the same epoch. Returns once every rank has, so that no rank leaves
  // while another still needs its part of the rounds for those batches; then this rank's actors
  // are stopped and only destruction remains (start_epoch() and next_batch() throw). Not a
  // failure: no abort hook is called and no rank reports an error. Throws, aborting the run,
  // when ranks depart at different steps, a rank fails, or not every rank has departed within
  // flow.round_timeout. At an epoch's end nobody waits: destruction alone is enough there.
  void depart();

  // Fails the epoch on every rank with `reason`: pending and later next_batch() calls throw.
  void abort(const std::string& reason);

  StatsSnapshot stats() const;
  // stats() as one JSON object; its rates are over the wall time since the first start_epoch
  // (docs/metrics.md).
  std::string stats_json() const;
  // The port of the Prometheus endpoint ([metrics] in the pipeline file, docs/metrics.md), which
  // runs until the Pipeline is destroyed; 0 when it is off.
  std::uint16_t metrics_port() const;
  const PipelineConfig& config() const;
  std::uint64_t dataset_records() const;  // records in the whole dataset
  std::uint64_t shard_records() const;    // records this rank reads in the current epoch
  std::uint32_t vocab_size() const;       // the tokenizer's: every token id is below it
  // The current epoch's number of steps (the same on every rank): known once the epoch's last
  // round is planned, shortly before its last batches are taken; nullopt before, and after a
  // failure.
  std::optional<std::uint64_t> epoch_steps() const;
  std::uint32_t rank() const;
  std::uint32_t world_size() const;
  // The actors the current epoch spawned, per node of the pipeline's graph in its order (what
  // `odbatch graph` draws: odbatch/config/pipeline_graph.hpp); empty before the first epoch.
  std::vector<std::pair<std::string, std::uint32_t>> spawned_actors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odbatch
