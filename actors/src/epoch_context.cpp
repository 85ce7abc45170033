#include "epoch_context.hpp"

#include <cstdlib>
#include <stdexcept>

#include "odbatch/log/logger.hpp"
#include "odbatch/source/dataset_error.hpp"

namespace odbatch::actors {
namespace {

// Where the flight recorder writes when [distributed] flight_recorder_dir is unset: the user's
// state directory as XDG defines it ($XDG_STATE_HOME if absolute, else ~/.local/state), in
// odbatch/flight; none without either. Not the shared temporary directory, where every user's
// runs would overwrite each other's files.
std::optional<std::filesystem::path> default_flight_recorder_dir() {
  if (const char* state = std::getenv("XDG_STATE_HOME");
      state && std::filesystem::path(state).is_absolute())
    return std::filesystem::path(state) / "odbatch" / "flight";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local" / "state" / "odbatch" / "flight";
  return std::nullopt;
}

// Writes the flight recorder's file; the note a failure's message ends with: the file, saying so
// when it is in the default directory, or why there is none.
std::string write_flight_recorder(const FlightRecorder& recorder, const DistributedConfig& config,
                                  std::uint32_t rank) {
  const bool configured = !config.flight_recorder_dir.empty();
  const auto dir =
      configured ? std::optional(config.flight_recorder_dir) : default_flight_recorder_dir();
  if (!dir)
    return " (flight recorder not written: [distributed] flight_recorder_dir is unset, and "
           "neither XDG_STATE_HOME nor HOME names a default directory)";
  const auto file = *dir / ("odbatch-flight-rank" + std::to_string(rank) + ".json");
  try {
    std::filesystem::create_directories(*dir);
    recorder.write(file);
  } catch (const std::exception& e) {
    return " (flight recorder not written: " + std::string(e.what()) + ")";
  }
  if (configured) return " (last rounds: " + file.string() + ")";
  return " (last rounds: " + file.string() +
         ", the default directory; [distributed] flight_recorder_dir sets another)";
}

}  // namespace

std::vector<caf::actor> Wiring::all() const {
  std::vector<caf::actor> actors{
      caf::actor_cast<caf::actor>(reader),      caf::actor_cast<caf::actor>(joiner),
      caf::actor_cast<caf::actor>(packer),      caf::actor_cast<caf::actor>(aligner),
      caf::actor_cast<caf::actor>(coordinator), caf::actor_cast<caf::actor>(emitter)};
  for (const auto& worker : tokenizers) actors.push_back(caf::actor_cast<caf::actor>(worker));
  for (const auto& worker : image_decoders) actors.push_back(caf::actor_cast<caf::actor>(worker));
  for (const auto& pool : record_stages) {
    actors.push_back(caf::actor_cast<caf::actor>(pool.dispatcher));
    for (const auto& worker : pool.workers) actors.push_back(caf::actor_cast<caf::actor>(worker));
  }
  for (const auto& pool : sample_stages) {
    actors.push_back(caf::actor_cast<caf::actor>(pool.dispatcher));
    for (const auto& worker : pool.workers) actors.push_back(caf::actor_cast<caf::actor>(worker));
  }
  return actors;
}

EpochContext::EpochContext(std::shared_ptr<const PipelineResources> resources, std::uint64_t epoch,
                           ShardSequence shard, EpochStart start, std::shared_ptr<BatchQueue> queue,
                           PipelineStats& stats, LedgerWriter* ledger, Collective& collective,
                           FlightRecorder* recorder, AbortHook* abort_hook)
    : resources_(std::move(resources)),
      epoch_(epoch),
      shard_spec_{resources_->config.batching.seed,
                  epoch,
                  resources_->config.source.shuffle,
                  resources_->config.source.split,
                  resources_->rank,
                  resources_->world_size},
      shard_(std::move(shard)),
      start_(std::move(start)),
      queue_(std::move(queue)),
      stats_(stats),
      ledger_(ledger),
      collective_(collective),
      recorder_(recorder),
      abort_hook_(abort_hook),
      started_(std::chrono::steady_clock::now()) {}

void EpochContext::reject(const Rejection& rejection) {
  stats_.count_rejection(rejection.reason);
  // A dirty dataset can reject millions of records: the first few say what is wrong, the epoch's
  // end gives the counts, and the ledger lists every one.
  constexpr std::uint64_t kRejectionsWarned = 5;
  const auto seen = rejections_.fetch_add(1, std::memory_order_relaxed);
  const auto level = seen < kRejectionsWarned ? LogLevel::warn : LogLevel::debug;
  if (log_enabled(level))
    Logger(resources_->rank)
        .log(level,
             "epoch " + std::to_string(epoch_) + ": sample " + std::to_string(rejection.id) +
                 " rejected (" + rejection.reason + "): " + rejection.detail +
                 (seen + 1 == kRejectionsWarned ? " (further rejections at debug level)" : ""));
  if (ledger_) ledger_->rejection(epoch_, rejection);
  if (config().source.on_bad_record == BadRecordPolicy::fail)
    fail("sample " + std::to_string(rejection.id) + " rejected (" + rejection.reason +
             ") and source.on_bad_record is fail: " + rejection.detail,
         PipelineFailure::Cause::data);
}

void EpochContext::fail(const std::string& reason, PipelineFailure::Cause cause,
                        std::optional<std::uint64_t> round) {
  if (failed_.exchange(true)) return;
  if (departing_) return stop_actors();
  std::string message = "rank " + std::to_string(resources_->rank) + ", epoch " +
                        std::to_string(epoch_) + ": " + reason;
  // The other ranks get the cause alone: each names its own flight recorder's file, and a note
  // per rank on the way would repeat in their messages.
  const std::string cause_for_peers = message;
  if (recorder_)
    message += write_flight_recorder(*recorder_, config().distributed, resources_->rank);
  Logger(resources_->rank).error(message);
  queue_->fail(std::make_exception_ptr(PipelineFailure(cause, message, round)));
  collective_.abort(cause_for_peers);
  if (abort_hook_) (*abort_hook_)(message);
  stop_actors();
}

void EpochContext::stop_actors() {
  std::call_once(stop_once_, [&] {
    for (const auto& actor : wiring_.all())
      if (actor) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  });
}

void report_exceptions_to(caf::scheduled_actor* self, EpochContextPtr context,
                          std::string actor_name) {
  // A weak reference: the context holds the actors, so a strong one would keep both alive.
  std::weak_ptr<EpochContext> weak = context;
  self->set_exception_handler(
      [weak, actor_name](caf::scheduled_actor*, std::exception_ptr& error) -> caf::error {
        const auto live = weak.lock();
        try {
          std::rethrow_exception(error);
        } catch (const DatasetError& e) {
          if (live) live->fail(actor_name + ": " + e.what(), PipelineFailure::Cause::data);
        } catch (const CollectiveError& e) {
          if (live) live->fail(actor_name + ": " + e.what(), PipelineFailure::Cause::peer);
        } catch (const std::exception& e) {
          if (live) live->fail(actor_name + ": " + e.what());
        } catch (...) {
          if (live) live->fail(actor_name + ": unknown exception");
        }
        return caf::exit_reason::user_shutdown;
      });
}

}  // namespace odbatch::actors
