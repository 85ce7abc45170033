#pragma once
// One rank's side of the control plane (docs/distributed.md): heartbeats from a thread of their
// own, round readiness with every rank's proposal size, peer liveness, the abort key on which the
// first failure wins, and the finish barrier. All of it lives in one run's namespace of the store.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/core/departure.hpp"
#include "odbatch/dist/distributed_config.hpp"
#include "odbatch/store/store.hpp"

namespace odbatch {

class ControlPlane {
 public:
  using Clock = std::chrono::steady_clock;
  // Called once, from the heartbeat thread, when the abort key appears or the store is lost.
  using AbortHandler = std::function<void(const std::string& reason)>;

  // `calls` serves this rank's calls, `heartbeats` only the heartbeat thread: a connection of its
  // own, so that a long wait never holds a heartbeat up. Both are views of the run's namespace and
  // must outlive the control plane. `store_host` names who serves the store ("rank 0"), for the
  // error when it is lost. Starts the heartbeat thread.
  ControlPlane(Store& calls, Store& heartbeats, std::uint32_t rank, std::uint32_t world_size,
               const DistributedConfig& timing, AbortHandler on_abort,
               std::string store_host = "the store's host");
  ~ControlPlane();  // stops the heartbeats
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Publishes "ready for exchange `sequence` with `size` bytes" and returns once every rank is
  // ready, with every rank's size (indexed by rank), so that the exchange needs no round of its
  // own for them: one store call when nobody is late. Throws CollectiveError naming the cause:
  // the abort key's reason, a peer whose heartbeat stopped for peer_timeout (with its rank), the
  // ranks not ready at `deadline`, a malformed size, or the store failing.
  std::vector<std::uint64_t> ready(std::uint64_t sequence, std::uint64_t size,
                                   Clock::time_point deadline);

  // Writes `reason` to the abort key unless a failure is already there; returns the reason that
  // stands (the first). Never throws: with the store gone, returns the first cause this rank
  // learned of (first_cause()), or `reason` when it knows of none.
  std::string abort(const std::string& reason);

  // The abort key's reason, if any.
  std::optional<std::string> abort_reason();

  // The first failure this rank learned of: the abort key as it read or wrote it, the store lost,
  // a dead peer. Kept here because the abort key goes with the store: once that is lost, every
  // later error still carries the cause.
  std::optional<std::string> first_cause() const;

  // While watching (during an exchange, which has only its deadline otherwise), the heartbeat
  // thread also checks every peer's liveness and aborts the run when one is dead.
  void watch_peers(bool watching) { watching_ = watching; }

  // Says this rank has finished epoch `epoch` and waits, liveness-checked like ready(), until
  // every rank has; then checks that the run was not aborted meanwhile.
  void finish_epoch(std::uint64_t epoch, Clock::time_point deadline);

  // Announces this rank's departure and waits, liveness-checked like ready(), until every rank
  // has announced one; throws CollectiveError when they differ. From the announcement on, a
  // peer's silence during an exchange no longer aborts the run (every rank still needed has not
  // announced, and the wait checks those); once all agree, the run has ended: readiness waits
  // fail at once and the abort key is no longer watched.
  void depart(const Departure& departure, Clock::time_point deadline);
  bool departing() const { return departing_; }
  bool departed() const { return departed_; }

  // Says this rank is finished. With `wait_for_all` (the store's host, before it stops serving),
  // then waits until every rank is, liveness-checked like ready().
  void finish(bool wait_for_all);

  // Says this rank has left an aborted run. With `wait_for_others` (the store's host), then waits
  // until every other rank has too, or peer_timeout passed (a dead rank never says so).
  void leave_aborted(bool wait_for_others);

  std::uint32_t rank() const { return rank_; }

 private:
  struct PeerBeat {
    std::optional<std::int64_t> count;  // none until its heartbeat key appears
    Clock::time_point since;            // when `count` was last seen to change
  };
  // Last seen heartbeat counts, per peer, of one observer (a thread).
  using PeerBeats = std::map<std::uint32_t, PeerBeat>;

  // A key this rank sets in the same store call as its first wait.
  struct Publish {
    std::string key;
    std::vector<std::byte> value;
  };

  void heartbeat_loop();
  // Sets `publish`'s key, then waits until every key is set (`keys`: one per peer, in peers_'s
  // order), checking the abort key and the liveness of the peers whose keys are missing between
  // short waits. `what` says what the keys mean, for the errors; `beats` is the waiting thread's
  // own view of the peers' heartbeats. Returns the values of `keys`, in order. An exchange's
  // readiness (`ends_with_run`) also ends when every rank has departed.
  std::vector<std::vector<std::byte>> wait_live(Publish publish,
                                                const std::vector<std::string>& keys,
                                                std::optional<Clock::time_point> deadline,
                                                const std::string& what, PeerBeats& beats,
                                                bool ends_with_run = false);
  // Each peer's key, in peers_'s order.
  std::vector<std::string> peer_keys(const std::function<std::string(std::uint32_t)>& key_of) const;
  // A failed store call as the cause of a failure: a lost connection names the store's host.
  std::string store_failure(const StoreError& e) const;
  // Keeps `cause` unless one was kept before; returns the one kept.
  std::string keep_cause(const std::string& cause);
  // Throws CollectiveError naming the first of `ranks` whose heartbeat stopped for peer_timeout.
  void check_liveness(Store& store, PeerBeats& beats, const std::vector<std::uint32_t>& ranks,
                      const std::string& what);

  Store& calls_;
  Store& heartbeats_;
  std::uint32_t rank_;
  std::uint32_t world_;
  DistributedConfig timing_;
  AbortHandler on_abort_;
  std::string store_host_;
  std::vector<std::uint32_t> peers_;
  PeerBeats beats_;            // the round's thread's (readiness, barriers)
  PeerBeats departure_beats_;  // the departing trainer's, which waits beside the readiness
  PeerBeats watched_beats_;    // the heartbeat thread's
  std::atomic<bool> watching_{false};
  std::atomic<bool> departing_{false};  // this rank announced its departure
  std::atomic<bool> departed_{false};   // every rank announced the same one

  mutable std::mutex cause_mutex_;
  std::optional<std::string> first_cause_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread heartbeat_thread_;
};

}  // namespace odbatch
