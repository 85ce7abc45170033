#include "odbatch/actors/pipeline.hpp"

#include <caf/all.hpp>

#include <thread>

#include "epoch_context.hpp"
#include "graph_builder.hpp"
#include "odbatch/config/checkpoint_settings.hpp"
#include "odbatch/core/departure.hpp"
#include "odbatch/core/resume_plan.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/log/logger.hpp"
#include "odbatch/metrics/metrics_json.hpp"
#include "odbatch/metrics/metrics_prometheus.hpp"
#include "odbatch/metrics/metrics_server.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "rejection_reasons.hpp"
#include "stall_watch.hpp"
#include "user_stages.hpp"

namespace odbatch {

using actors::BatchQueue;
using actors::EpochContext;
using actors::PipelineResources;

struct Pipeline::Impl {
  std::shared_ptr<const PipelineResources> resources;
  DistEnv dist;
  std::unique_ptr<caf::actor_system_config> system_config;
  std::unique_ptr<caf::actor_system> system;
  std::unique_ptr<Collective> collective;
  std::unique_ptr<PipelineStats> stats = std::make_unique<PipelineStats>();
  std::unique_ptr<LedgerWriter> ledger;
  std::unique_ptr<FlightRecorder> recorder;  // across epochs; none when configured off
  std::unique_ptr<actors::AbortHook> abort_hook;
  std::unique_ptr<MetricsServer> metrics;  // none when configured off

  CollectiveFactory collective_factory;
  std::unique_ptr<Collective> make_collective();
  void start_metrics();
  std::shared_ptr<BatchQueue> queue;
  std::shared_ptr<EpochContext> epoch;
  bool epoch_finished = true;
  std::uint64_t batches_taken = 0;  // of the current epoch
  GlobalProgress progress_taken;    // after the last batch taken
  // The round that planned the last batch taken (none before the epoch's first, or a resumed
  // epoch's first, batch is taken).
  std::shared_ptr<const RoundRecord> round_taken;
  std::optional<std::string> departed;  // where this rank left the run
  StatsSnapshot at_epoch_start;         // the counters when the current epoch was spawned

  EpochShard epoch_shard(std::uint64_t number, std::uint32_t rank, std::uint32_t world) const;
  EpochShardSizes shard_sizes(std::uint64_t number) const;
  // The records `start.sequence` names, in order.
  ShardSequence read_sequence(std::uint64_t number, const EpochStart& start) const;
  void spawn_epoch(std::uint64_t number, EpochStart start);
  // The part of a checkpoint that restarts epoch `number` from its beginning.
  Checkpoint epoch_beginning(std::uint64_t number) const;
  void end_current_epoch();
  // The epoch's end in the log: its steps and samples, and its rejections by reason.
  void log_epoch_end() const;
};

namespace {

// Free image buffers kept for reuse: at most as many as the reader may have in flight, within a
// byte total that keeps an idle pipeline's footprint small.
constexpr std::size_t kKeptImageBufferBytes = std::size_t{128} << 20;

std::shared_ptr<const PipelineResources> load_resources(PipelineConfig config, const DistEnv& dist,
                                                        const StageRegistry& stages,
                                                        PipelineStats& stats) {
  validate(config);
  auto resources = std::make_shared<PipelineResources>();
  resources->stages = actors::make_user_stages(config, stages, stats);
  auto index = std::make_shared<const DatasetIndex>(build_dataset_index(config.source));
  resources->mix = mixed_sources(config.source, *index);
  resources->records = std::make_shared<const RecordReader>(index, config.source.reader);
  resources->index = std::move(index);
  resources->tokenizer = std::make_shared<const ChatTokenizer>(config.tokenizer.model,
                                                               effective_tokenizer_options(config));
  resources->source_tokenizers = {resources->tokenizer};
  for (std::uint32_t i = 0; i < config.source.mix.size(); ++i) {
    if (config.source.mix[i].templating.empty()) {
      resources->source_tokenizers.push_back(resources->tokenizer);
      continue;
    }
    try {
      resources->source_tokenizers.push_back(std::make_shared<const ChatTokenizer>(
          config.tokenizer.model, effective_tokenizer_options(config, i + 1)));
    } catch (const ConfigError& e) {
      throw ConfigError("source.mix[" + std::to_string(i) + "]." + e.field(),
                        std::string(e.what()).substr(e.field().size() + 2));
    }
  }
  resources->image_buffers =
      std::make_shared<ImageBufferPool>(config.flow.reader_capacity, kKeptImageBufferBytes);
  resources->graph = pipeline_graph(config);
  resources->settings = checkpoint_settings(config, *resources->index);
  for (auto& setting : actors::user_stage_settings(resources->stages))
    resources->settings.push_back(std::move(setting));
  resources->rank = dist.rank;
  resources->world_size = dist.world_size;
  resources->config = std::move(config);
  return resources;
}

// [metrics].port, moved up by the local rank so that the ranks of one machine do not collide.
std::uint16_t metrics_port_of(const MetricsConfig& metrics, const DistEnv& dist) {
  if (metrics.port == 0) return 0;
  const std::uint64_t port = std::uint64_t{metrics.port} + dist.local_rank;
  if (port > 65535)
    throw std::invalid_argument("metrics.port " + std::to_string(metrics.port) + " + LOCAL_RANK " +
                                std::to_string(dist.local_rank) + " is above 65535");
  return static_cast<std::uint16_t>(port);
}

std::uint32_t scheduler_threads(const FlowConfig& flow) {
  if (flow.scheduler_threads > 0) return flow.scheduler_threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

void Pipeline::Impl::start_metrics() {
  const auto& config = resources->config.metrics;
  if (!config.enabled) return;
  MetricsServerOptions options;
  options.address = config.address;
  options.port = metrics_port_of(config, dist);
  auto reasons = actors::rejection_reasons();
  for (auto& reason : actors::user_stage_reasons(resources->stages))
    reasons.push_back(std::move(reason));
  metrics = std::make_unique<MetricsServer>(
      options, [counters = stats.get(),
                scope = PrometheusScope{dist.rank, dist.world_size, std::move(reasons)}] {
        return prometheus_text(counters->snapshot(), scope);
      });
}

EpochShard Pipeline::Impl::epoch_shard(std::uint64_t number, std::uint32_t rank,
                                       std::uint32_t world) const {
  const auto& config = resources->config;
  const ShardSpec spec{config.batching.seed, number, config.source.shuffle,
                       config.source.split,  rank,   world};
  if (resources->mix.empty()) return EpochShard(resources->index->record_count(), spec);
  return EpochShard(
      std::make_shared<const EpochSelection>(resources->mix, spec.seed, number, spec.shuffle),
      spec);
}

EpochShardSizes Pipeline::Impl::shard_sizes(std::uint64_t number) const {
  return [this, number](std::uint32_t rank, std::uint32_t world) {
    return epoch_shard(number, rank, world).size();
  };
}

ShardSequence Pipeline::Impl::read_sequence(std::uint64_t number, const EpochStart& start) const {
  ShardSequence sequence;
  for (const auto& piece : start.sequence) {
    if (const auto* ids = std::get_if<std::vector<SampleId>>(&piece)) {
      sequence.append_ids(*ids);
    } else {
      const auto& range = std::get<EpochShardRange>(piece);
      sequence.append_range(epoch_shard(number, range.rank, range.world_size), range.begin,
                            range.end);
    }
  }
  return sequence;
}

void Pipeline::Impl::spawn_epoch(std::uint64_t number, EpochStart start) {
  queue = std::make_shared<BatchQueue>(resources->config.flow.prefetch);
  stats->batch_queue.capacity.store(queue->capacity(), std::memory_order_relaxed);
  const auto steps_taken = start.steps_taken;
  progress_taken = start.progress;
  round_taken.reset();
  auto shard = read_sequence(number, start);
  at_epoch_start = stats->snapshot();
  epoch = std::make_shared<EpochContext>(resources, number, std::move(shard), std::move(start),
                                         queue, *stats, ledger.get(), *collective, recorder.get(),
                                         abort_hook.get());
  if (ledger) {
    ledger->begin_epoch(LedgerEpoch{number, resources->index->record_count(),
                                    resources->index->fingerprint(), epoch->shard_spec(),
                                    resources->mix, resources->settings});
    if (steps_taken > 0) ledger->resumed(number, steps_taken);
  }
  actors::spawn_graph(*system, epoch, resources->graph);
  Logger(dist.rank).info(
      "epoch " + std::to_string(number) +
      (steps_taken > 0 ? " resumed after step " + std::to_string(steps_taken) : " started"));
  epoch_finished = false;
  batches_taken = steps_taken;
}

std::unique_ptr<Collective> Pipeline::Impl::make_collective() {
  auto made = collective_factory(dist, resources->config.distributed);
  if (abort_hook)
    made->set_abort_listener(
        [hook = abort_hook.get()](const std::string& reason) { (*hook)(reason); });
  return made;
}

void Pipeline::Impl::end_current_epoch() {
  if (!epoch) return;
  // Whoever still waits on this epoch is released: the emitter on a full queue and, in an
  // unfinished epoch, the coordinator in the round collective (the other ranks see the abort).
  queue->close();
  if (!epoch_finished)
    collective->abort("rank " + std::to_string(dist.rank) + " stopped epoch " +
                      std::to_string(epoch->epoch()) + " before its end");
  epoch->stop_actors();
  // Until they are gone, the old epoch's actors could still use the collective (which a restart
  // replaces), count into the stats and write to the ledger after the next epoch began.
  caf::scoped_actor waiter{*system};
  waiter->wait_for(epoch->wiring().all());
  epoch.reset();
  // Whatever the epoch's queue still held is dropped with it.
  stats->batch_queue.depth.store(0, std::memory_order_relaxed);
}

void Pipeline::Impl::log_epoch_end() const {
  const Logger logger(dist.rank);
  if (!log_enabled(LogLevel::warn)) return;
  const auto now = stats->snapshot();
  const auto number = std::to_string(epoch->epoch());
  logger.info("epoch " + number + " ended after " + std::to_string(batches_taken) +
              " steps: " + std::to_string(now.samples_emitted - at_epoch_start.samples_emitted) +
              " samples emitted, " +
              std::to_string(now.samples_rejected - at_epoch_start.samples_rejected) + " rejected");
  std::string reasons;
  for (const auto& [reason, count] : now.rejected_by_reason) {
    const auto before = at_epoch_start.rejected_by_reason.find(reason);
    const auto in_epoch =
        count - (before == at_epoch_start.rejected_by_reason.end() ? 0 : before->second);
    if (in_epoch > 0)
      reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(in_epoch);
  }
  if (!reasons.empty())
    logger.warn("epoch " + number + " rejected " +
                std::to_string(now.samples_rejected - at_epoch_start.samples_rejected) +
                " records: " + reasons + (ledger ? "; the ledger lists each" : ""));
}

Pipeline::Pipeline(PipelineConfig config, DistEnv dist, PipelineOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->resources = load_resources(std::move(config), dist, options.stages, *impl_->stats);
  impl_->dist = std::move(dist);
  if (options.on_abort) impl_->abort_hook = std::make_unique<actors::AbortHook>(options.on_abort);
  impl_->collective_factory = options.collective ? options.collective : make_round_collective;
  impl_->collective = impl_->make_collective();
  if (options.ledger) impl_->ledger = std::make_unique<LedgerWriter>(*options.ledger);
  if (const auto rounds = impl_->resources->config.distributed.flight_recorder_rounds; rounds > 0)
    impl_->recorder = std::make_unique<FlightRecorder>(impl_->dist.rank, rounds);
  impl_->system_config = std::make_unique<caf::actor_system_config>();
  impl_->system_config->set("scheduler.max-threads",
                            scheduler_threads(impl_->resources->config.flow));
  impl_->system = std::make_unique<caf::actor_system>(*impl_->system_config);
  impl_->start_metrics();
  if (log_enabled(LogLevel::info)) {
    const auto& index = *impl_->resources->index;
    Logger(impl_->dist.rank)
        .info("pipeline ready: " + std::to_string(index.record_count()) + " records in " +
              std::to_string(index.files().size()) + " file(s), rank " +
              std::to_string(impl_->dist.rank) + " of " + std::to_string(impl_->dist.world_size));
  }
}

Pipeline::~Pipeline() {
  impl_->metrics.reset();
  impl_->end_current_epoch();
  // ~actor_system waits for every actor, all of which were told to stop.
  impl_->system.reset();
}

void Pipeline::start_epoch(std::uint64_t epoch) {
  if (impl_->departed) throw std::logic_error("start_epoch() after depart() " + *impl_->departed);
  if (impl_->epoch && !impl_->epoch_finished) {
    if (impl_->dist.world_size > 1)
      throw std::logic_error("epoch " + std::to_string(impl_->epoch->epoch()) +
                             " is unfinished; with several ranks every rank must finish it, or "
                             "the run must be aborted");
    // end_current_epoch() aborted the unfinished epoch's collective, and an aborted group stays
    // aborted: a rank alone starts over in a group of its own.
    impl_->end_current_epoch();
    impl_->dist.inproc_group = InprocGroup::create(1);
    impl_->collective = impl_->make_collective();
  }
  impl_->end_current_epoch();
  impl_->stats->mark_started();
  impl_->spawn_epoch(epoch, fresh_epoch_start(impl_->dist.rank, impl_->dist.world_size,
                                              impl_->shard_sizes(epoch)));
}

std::shared_ptr<const Batch> Pipeline::next_batch() {
  if (!impl_->queue) throw std::logic_error("next_batch() before start_epoch()");
  if (impl_->departed) throw std::logic_error("next_batch() after depart() " + *impl_->departed);
  const auto wait_start = std::chrono::steady_clock::now();
  auto queued =
      actors::pop_watching_stalls(*impl_->epoch, impl_->resources->config.flow.stall_timeout);
  impl_->stats->trainer_wait_ns.fetch_add(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - wait_start)
                                     .count()),
      std::memory_order_relaxed);
  if (!queued) {
    // Every rank's trainer has taken the epoch's last batch before any rank reports its end.
    if (!impl_->epoch_finished)
      impl_->collective->finish_epoch(
          impl_->epoch->epoch(),
          std::chrono::steady_clock::now() + impl_->resources->config.flow.round_timeout);
    impl_->epoch_finished = true;
    impl_->log_epoch_end();
    return nullptr;
  }
  const auto& info = queued->batch->step_info();
  impl_->progress_taken = {info.global_samples_consumed, info.global_tokens_consumed};
  impl_->round_taken = std::move(queued->round);
  ++impl_->batches_taken;
  impl_->stats->batch_queue.depth.fetch_sub(1, std::memory_order_relaxed);
  return std::move(queued->batch);
}

void Pipeline::depart() {
  if (impl_->departed) return;
  if (!impl_->epoch || impl_->epoch_finished) {
    impl_->departed = "at an epoch's end";
    return;
  }
  const Departure departure{impl_->epoch->epoch(), impl_->batches_taken};
  impl_->epoch->begin_departure();
  try {
    impl_->collective->depart(
        departure.epoch, departure.steps,
        std::chrono::steady_clock::now() + impl_->resources->config.flow.round_timeout);
  } catch (const CollectiveError& e) {
    const std::string reason = "rank " + std::to_string(impl_->dist.rank) + ": departure at " +
                               describe(departure) + " failed: " + e.what();
    impl_->collective->abort(reason);
    if (impl_->abort_hook) (*impl_->abort_hook)(reason);
    impl_->departed = "(which failed)";
    impl_->epoch_finished = true;  // aborted above already
    impl_->end_current_epoch();
    throw std::runtime_error(reason);
  }
  impl_->departed = "at " + describe(departure);
  impl_->epoch_finished = true;
  impl_->end_current_epoch();  // no step reaches the ledger after this
  if (impl_->ledger) impl_->ledger->departed(departure.epoch, departure.steps);
}

void Pipeline::abort(const std::string& reason) {
  if (impl_->epoch) {
    impl_->epoch->fail("aborted: " + reason, PipelineFailure::Cause::aborted);
  } else {
    impl_->collective->abort(reason);
  }
}

StatsSnapshot Pipeline::stats() const {
  return impl_->stats->snapshot();
}
std::string Pipeline::stats_json() const {
  return odbatch::stats_json(stats());
}
std::uint16_t Pipeline::metrics_port() const {
  return impl_->metrics ? impl_->metrics->port() : 0;
}
const PipelineConfig& Pipeline::config() const {
  return impl_->resources->config;
}
std::uint64_t Pipeline::dataset_records() const {
  return impl_->resources->index->record_count();
}
std::uint64_t Pipeline::shard_records() const {
  return impl_->epoch ? impl_->epoch->shard().size() : 0;
}
std::uint32_t Pipeline::vocab_size() const {
  return impl_->resources->tokenizer->vocab_size();
}
std::optional<std::uint64_t> Pipeline::epoch_steps() const {
  if (!impl_->epoch) return std::nullopt;
  return impl_->epoch->total_steps();
}
std::vector<std::pair<std::string, std::uint32_t>> Pipeline::spawned_actors() const {
  std::vector<std::pair<std::string, std::uint32_t>> actors;
  if (!impl_->epoch) return actors;
  for (const auto& node : impl_->resources->graph.nodes)
    actors.emplace_back(node.name, actors::spawned_actors(impl_->epoch->wiring(), node));
  return actors;
}
std::uint32_t Pipeline::rank() const {
  return impl_->dist.rank;
}
std::uint32_t Pipeline::world_size() const {
  return impl_->dist.world_size;
}

Checkpoint Pipeline::Impl::epoch_beginning(std::uint64_t number) const {
  Checkpoint checkpoint;
  checkpoint.epoch = number;
  checkpoint.world_size = dist.world_size;
  checkpoint.settings = resources->settings;
  RankCheckpoint mine;
  mine.rank = dist.rank;
  mine.shard_size = epoch_shard(number, dist.rank, dist.world_size).size();
  checkpoint.ranks.push_back(std::move(mine));
  return checkpoint;
}

Checkpoint Pipeline::state() const {
  if (impl_->departed) throw std::logic_error("state() after depart() " + *impl_->departed);
  if (log_enabled(LogLevel::debug))
    Logger(impl_->dist.rank)
        .debug("state taken after step " + std::to_string(impl_->batches_taken) + " of epoch " +
               (impl_->epoch ? std::to_string(impl_->epoch->epoch()) : std::string("0")) +
               (impl_->epoch_finished && impl_->epoch ? " (finished)" : ""));
  if (!impl_->epoch) return impl_->epoch_beginning(0);
  const auto number = impl_->epoch->epoch();
  if (impl_->epoch_finished) return impl_->epoch_beginning(number + 1);
  if (impl_->batches_taken == 0) return impl_->epoch_beginning(number);
  const auto& start = impl_->epoch->start();
  if (start.resumed_part && impl_->batches_taken == start.steps_taken) return *start.resumed_part;
  auto checkpoint = impl_->epoch_beginning(number);
  checkpoint.steps_taken = impl_->batches_taken;
  checkpoint.progress = impl_->progress_taken;
  checkpoint.ranks.front() = rank_checkpoint_at(*impl_->round_taken, impl_->batches_taken,
                                                impl_->dist.rank, start.base_size);
  checkpoint.origin = start.origin;
  return checkpoint;
}

std::unique_ptr<Pipeline> Pipeline::resume(PipelineConfig config, DistEnv dist,
                                           const Checkpoint& checkpoint, PipelineOptions options) {
  auto pipeline =
      std::make_unique<Pipeline>(std::move(config), std::move(dist), std::move(options));
  auto& impl = *pipeline->impl_;
  try {
    const auto mismatches = setting_mismatches(checkpoint.settings, impl.resources->settings);
    if (!mismatches.empty()) {
      std::string message = "cannot resume from this checkpoint:";
      for (const auto& mismatch : mismatches) message += "\n  " + mismatch;
      throw CheckpointError(message);
    }
    auto start = plan_resume(checkpoint, impl.dist.rank, impl.dist.world_size,
                             impl.shard_sizes(checkpoint.epoch));
    impl.stats->mark_started();
    impl.spawn_epoch(checkpoint.epoch, std::move(start));
  } catch (const std::exception& e) {
    // The other ranks may have resumed: they must not wait in a round for this one.
    impl.collective->abort("rank " + std::to_string(impl.dist.rank) + ": " + e.what());
    throw;
  }
  return pipeline;
}

}  // namespace odbatch
