#include "odbatch/dist/process_group_collective.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <optional>

#include "group_index.hpp"
#include "odbatch/core/rank_names.hpp"
#include "odbatch/dist/gloo_collective.hpp"
#include "odbatch/dist/store_location.hpp"
#include "odbatch/log/logger.hpp"
#include "odbatch/store/prefix_store.hpp"
#include "odbatch/store/store_token.hpp"
#include "odbatch/store/tcp_store_client.hpp"
#include "odbatch/store/tcp_store_server.hpp"
#include "shared_store_host.hpp"

namespace odbatch {
namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name) != 0 || !*name) return "127.0.0.1";
  return name;
}

// Gloo writes to its peers' sockets without MSG_NOSIGNAL: a peer that dies mid-exchange would
// kill this process with SIGPIPE instead of failing the exchange. Ignored unless the program
// chose a handler of its own.
void ignore_sigpipe_unless_handled() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    signal(SIGPIPE, SIG_IGN);
}

}  // namespace

class ProcessGroupCollective::Group {
 public:
  Group(const DistEnv& env, const DistributedConfig& timing)
      : rank_(env.rank),
        world_(env.world_size),
        env_(env),
        timing_(timing),
        store_host_(env.store_address.empty() ? "rank 0" : "the standalone store") {
    const std::string who = "rank " + std::to_string(rank_) + " of " + std::to_string(world_);
    ignore_sigpipe_unless_handled();
    try {
      join();
    } catch (const std::exception& e) {
      throw CollectiveError(who + ": cannot join the group before round 0: " + e.what());
    }
  }

 private:
  // Each step names its own failures: a store lost (its host), a peer missing (its rank), a
  // token refused, or a store that never answered (the timeout).
  void join() {
    TcpStoreClientOptions client;
    try {
      client = store_client_options(env_);
    } catch (const std::invalid_argument& e) {
      throw CollectiveError(e.what());
    }
    if (hosts_store(env_)) host_store();
    client.connect_timeout = timing_.connect_timeout;
    client.call_timeout = timing_.store_timeout;
    connect(client);
    // Every Pipeline of the process is a group of its own on the run's store.
    const std::uint64_t group =
        next_group_index(env_.run_id, rank_, client.host + ":" + std::to_string(client.port));
    calls_ =
        std::make_unique<PrefixStore>(PrefixStore::for_group(env_.run_id, group, *calls_client_));
    beats_ =
        std::make_unique<PrefixStore>(PrefixStore::for_group(env_.run_id, group, *beats_client_));
    gloo_keys_ = std::make_unique<PrefixStore>("gloo/", *calls_);

    join_barrier();
    GlooOptions gloo;
    // Every rank has arrived: building the mesh is connection setup only, and a peer that
    // dies meanwhile must fail it as promptly as a dead peer fails a round.
    gloo.connect_timeout = std::max(timing_.peer_timeout, timing_.store_timeout);
    gloo.close_on_failure = false;  // failure() writes the abort key first, then closes
    gloo.hostname = env_.gloo_hostname;
    if (gloo.hostname.empty())
      gloo.hostname = is_loopback(client.host) ? client.host : this_host_name();
    if (gloo.hostname == "localhost") gloo.hostname = "127.0.0.1";
    build_mesh(gloo);
    try {
      control_ = std::make_unique<ControlPlane>(
          *calls_, *beats_, rank_, world_, timing_,
          [this](const std::string& reason) { stop_exchanges(reason); }, store_host_);
    } catch (const StoreError& e) {
      throw CollectiveError(store_lost(e));
    }
  }

  void host_store() {
    const std::uint16_t port = hosted_store_port(env_);
    const auto server = TcpStoreServerOptions::at(env_.master_addr, port, env_.store_token);
    try {
      server_ = share_hosted_store(server);
    } catch (const std::invalid_argument& e) {
      throw CollectiveError(e.what());
    } catch (const StoreError& e) {
      const std::string which = env_.store_port != 0
                                    ? "ODBATCH_STORE_PORT"
                                    : "MASTER_PORT + " + std::to_string(kStorePortOffset);
      throw CollectiveError("cannot host the store at " + env_.master_addr + ":" +
                            std::to_string(port) + " (" + which + "): " + e.what() +
                            "; set ODBATCH_STORE_PORT to a free port");
    }
    Logger(rank_).info("hosting the store at " + env_.master_addr + ":" + std::to_string(port) +
                       " for " + std::to_string(world_) + " rank(s)");
  }

  // Two connections: the heartbeats must never wait behind this rank's calls.
  void connect(const TcpStoreClientOptions& client) {
    Logger(rank_).debug("connecting to the store of " + store_host_ + " at " + client.host + ":" +
                        std::to_string(client.port));
    try {
      calls_client_ = std::make_unique<TcpStoreClient>(client);
      beats_client_ = std::make_unique<TcpStoreClient>(client);
    } catch (const StoreError& e) {
      switch (e.kind()) {
        case StoreError::Kind::authentication:
          throw CollectiveError(std::string("authentication failed: the store refused this "
                                            "rank's token (") +
                                kStoreTokenVariable + " must be the store's): " + e.what());
        case StoreError::Kind::rejected:
          throw CollectiveError(std::string("the store refused the connection: ") + e.what());
        case StoreError::Kind::connection:
        case StoreError::Kind::timeout:
          break;
      }
      // The client retries until connect_timeout: no store answered all that time.
      throw CollectiveError("timed out: no store answered within connect_timeout_ms (" +
                            std::to_string(timing_.connect_timeout.count()) + " ms; " +
                            store_host_ + " has not started it, or is unreachable): " + e.what());
    }
  }

  // A store call failed after connecting: the store is gone (its host died, stopped or became
  // unreachable) unless the call merely timed out.
  std::string store_lost(const StoreError& e) const {
    if (e.kind() == StoreError::Kind::timeout)
      return std::string("timed out: a store call took longer than store_timeout_ms (") +
             std::to_string(timing_.store_timeout.count()) + " ms): " + e.what();
    return lost_store(e.what());
  }

  std::string lost_store(const std::string& why) const {
    return "lost the store (" + store_host_ + " is dead or unreachable): " + why;
  }

  bool store_answers() {
    try {
      calls_->check({"joined/" + std::to_string(rank_)});
      return true;
    } catch (const StoreError&) {
      return false;
    }
  }

  // Waits until every rank has connected to the store (at most connect_timeout: ranks start at
  // different times). A lost store fails it at once, naming its host; the ranks that never came
  // are named at the deadline.
  void join_barrier() {
    std::vector<std::string> others;
    std::vector<std::uint32_t> other_ranks;
    for (std::uint32_t r = 0; r < world_; ++r)
      if (r != rank_) {
        others.push_back("joined/" + std::to_string(r));
        other_ranks.push_back(r);
      }
    if (others.empty()) return;
    try {
      calls_->set_and_wait("joined/" + std::to_string(rank_), store_bytes("1"), others,
                           timing_.connect_timeout);
    } catch (const StoreError& e) {
      if (e.kind() != StoreError::Kind::timeout) throw CollectiveError(store_lost(e));
      std::vector<std::uint32_t> missing;
      try {
        for (std::size_t i = 0; i < others.size(); ++i)
          if (!calls_->check({others[i]})) missing.push_back(other_ranks[i]);
      } catch (const StoreError& lost) {
        throw CollectiveError(store_lost(lost));
      }
      throw CollectiveError(rank_names(missing.empty() ? other_ranks : missing) +
                            " did not join within connect_timeout_ms (" +
                            std::to_string(timing_.connect_timeout.count()) + " ms): " + e.what());
    }
  }

  // The mesh's own errors name the peer it could not reach, whatever became of the store since:
  // a rank that fails to join takes the store it hosts with it, and must not be blamed for the
  // peer that made it fail. Only when that peer is the store's host, and the store is gone, is
  // the store named too.
  void build_mesh(const GlooOptions& gloo) {
    try {
      gloo_ = std::make_unique<GlooCollective>(*gloo_keys_, rank_, world_, gloo);
    } catch (const StoreError& e) {
      throw CollectiveError(store_lost(e));
    } catch (const GlooPeerError& e) {
      const bool peer_hosts_store = env_.store_address.empty() && e.peer() == 0;
      if (peer_hosts_store && !store_answers()) throw CollectiveError(lost_store(e.what()));
      throw;
    } catch (const CollectiveError& e) {
      if (!store_answers()) throw CollectiveError(lost_store(e.what()));
      throw;
    }
  }

 public:
  ~Group() {
    if (!aborted_) {
      try {
        control_->finish(/*wait_for_all=*/rank_ == 0);
        // The run's keys go with it, so a standalone store serves the next run clean.
        if (rank_ == 0) calls_->erase_all();
        control_.reset();  // joins the heartbeat thread while every member is still alive
        return;
      } catch (const std::exception& e) {
        control_->abort("rank " + std::to_string(rank_) + ": at shutdown: " + e.what());
      }
    }
    leave_aborted_run();
    control_.reset();
  }

  std::uint32_t rank() const { return rank_; }
  std::uint32_t world_size() const { return world_; }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) {
    const std::uint64_t sequence = sequence_++;
    const std::string exchange = "exchange " + std::to_string(sequence);
    if (aborted_) throw failure(exchange + " after an abort");
    if (departed_) throw ended(exchange + " after every rank departed");
    std::vector<std::uint64_t> sizes;
    try {
      sizes = control_->ready(sequence, mine.size(), deadline);
    } catch (const CollectiveError& e) {
      // Only the run's end stops a readiness wait quietly: its key is set, and a peer that finds
      // it may already be exchanging, so any other cause fails the run.
      if (control_->departed()) throw ended(exchange + ": " + e.what());
      throw failure(e.what());
    }
    std::vector<std::vector<std::byte>> all;
    control_->watch_peers(true);
    try {
      all = gloo_->allgather(mine, sizes, Clock::now() + timing_.exchange_timeout);
    } catch (const CollectiveError& e) {
      control_->watch_peers(false);
      if (control_->departing()) throw ended(exchange + ": " + e.what());
      throw failure(exchange + ": " + e.what());
    }
    control_->watch_peers(false);
    return all;
  }

  void abort(const std::string& reason) {
    // The abort key first: peers that see their exchange break must find the cause there.
    const std::string first = control_->abort(reason);
    stop_exchanges(first);
  }

  void finish_epoch(std::uint64_t epoch, Clock::time_point deadline) {
    try {
      control_->finish_epoch(epoch, deadline);
    } catch (const CollectiveError& e) {
      throw failure(e.what());
    }
  }

  void depart(const Departure& departure, Clock::time_point deadline) {
    const std::string what = "departing at " + describe(departure);
    if (aborted_) throw failure(what + " after an abort");
    try {
      control_->depart(departure, deadline);
    } catch (const CollectiveError& e) {
      throw failure(what + ": " + e.what());
    }
    // Nobody needs another exchange: this rank's, if one is pending, ends without a failure, and
    // its closed pairs end its peers' (who have announced the same departure).
    departed_ = true;
    gloo_->abort("the run ended: every rank departed at " + describe(departure));
  }

 private:
  // Rank 0 keeps the run's keys (and the store it may host) until the other ranks have read
  // the abort (each says so on leaving) or peer_timeout passed, so that they report the cause
  // rather than a lost store; then it clears them, so that a standalone store serves the next
  // run clean.
  void leave_aborted_run() {
    try {
      control_->leave_aborted(/*wait_for_others=*/rank_ == 0);
      if (rank_ == 0) calls_->erase_all();
    } catch (const std::exception&) {
      // Nothing more to tell anyone.
    }
  }

  void stop_exchanges(const std::string& reason) {
    aborted_ = true;
    gloo_->abort(reason);
    std::call_once(listener_called_, [&] {
      std::lock_guard lock(listener_mutex_);
      if (listener_) listener_(reason);
    });
  }

 public:
  void stop_hosted_store() {
    if (server_) server_->stop();
  }

  void set_abort_listener(AbortListener listener) {
    std::lock_guard lock(listener_mutex_);
    listener_ = std::move(listener);
  }

 private:
  // An exchange ended by this rank's departure: not a failure, nobody is told.
  CollectiveError ended(const std::string& why) const {
    return CollectiveError("rank " + std::to_string(rank_) + " departing: " + why);
  }

  // Aborts the group with `why` (unless a failure came first) and says what stands.
  CollectiveError failure(const std::string& why) {
    const std::string reason = "rank " + std::to_string(rank_) + ": " + why;
    const std::string first = control_->abort(reason);
    stop_exchanges(first);
    const bool ours = first == reason || why.find(first) != std::string::npos;
    return CollectiveError(ours ? why : why + " (the run was aborted: " + first + ")");
  }

  std::uint32_t rank_;
  std::uint32_t world_;
  DistEnv env_;
  DistributedConfig timing_;
  std::string store_host_;                  // who serves the store, for the errors when it is lost
  std::shared_ptr<TcpStoreServer> server_;  // shared by the process's groups (its Pipelines)
  std::unique_ptr<TcpStoreClient> calls_client_;
  std::unique_ptr<TcpStoreClient> beats_client_;
  std::unique_ptr<PrefixStore> calls_;
  std::unique_ptr<PrefixStore> beats_;
  std::unique_ptr<PrefixStore> gloo_keys_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> departed_{false};
  std::uint64_t sequence_ = 0;
  std::mutex listener_mutex_;
  AbortListener listener_;
  std::once_flag listener_called_;
  std::unique_ptr<GlooCollective> gloo_;
  std::unique_ptr<ControlPlane> control_;  // last: its heartbeat thread uses every member above
};

ProcessGroupCollective::ProcessGroupCollective(const DistEnv& env, const DistributedConfig& timing)
    : group_(std::make_unique<Group>(env, timing)) {}

ProcessGroupCollective::~ProcessGroupCollective() = default;

std::uint32_t ProcessGroupCollective::rank() const {
  return group_->rank();
}
std::uint32_t ProcessGroupCollective::world_size() const {
  return group_->world_size();
}

std::vector<std::vector<std::byte>> ProcessGroupCollective::allgather(
    std::span<const std::byte> mine, Clock::time_point deadline) {
  return group_->allgather(mine, deadline);
}

void ProcessGroupCollective::abort(const std::string& reason) {
  group_->abort(reason);
}

void ProcessGroupCollective::finish_epoch(std::uint64_t epoch, Clock::time_point deadline) {
  group_->finish_epoch(epoch, deadline);
}

void ProcessGroupCollective::depart(std::uint64_t epoch, std::uint64_t steps,
                                    Clock::time_point deadline) {
  group_->depart(Departure{epoch, steps}, deadline);
}

void ProcessGroupCollective::set_abort_listener(AbortListener listener) {
  group_->set_abort_listener(std::move(listener));
}

void ProcessGroupCollective::stop_hosted_store() {
  group_->stop_hosted_store();
}

}  // namespace odbatch
