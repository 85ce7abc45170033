#include "odbatch/dist/control_plane.hpp"

#include <algorithm>
#include <charconv>

#include "odbatch/core/departure.hpp"
#include "odbatch/core/rank_names.hpp"
#include "odbatch/dist/collective.hpp"

namespace odbatch {
namespace {

const std::string kAbortKey = "abort";

std::string heartbeat_key(std::uint32_t rank) {
  return "heartbeat/" + std::to_string(rank);
}
// Readiness keys go in blocks of this many exchanges, each block under a prefix of its own, so
// that rank 0 clears a whole finished block with one call.
constexpr std::uint64_t kReadyBlock = 64;

std::string ready_block(std::uint64_t block) {
  return "ready/" + std::to_string(block) + "/";
}
std::string ready_key(std::uint64_t sequence, std::uint32_t rank) {
  return ready_block(sequence / kReadyBlock) + std::to_string(sequence) + "/" +
         std::to_string(rank);
}
std::string epoch_done_block(std::uint64_t epoch) {
  return "epoch_done/" + std::to_string(epoch) + "/";
}
std::string left_key(std::uint32_t rank) {
  return "left/" + std::to_string(rank);
}
std::string finished_key(std::uint32_t rank) {
  return "finished/" + std::to_string(rank);
}
std::string departure_key(std::uint32_t rank) {
  return "departed/" + std::to_string(rank);
}

std::int64_t heartbeat_count(const std::vector<std::byte>& value, std::uint32_t rank) {
  const std::string text = store_text(value);
  std::int64_t count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc{} || end != text.data() + text.size())
    throw CollectiveError("rank " + std::to_string(rank) + "'s heartbeat is not a counter: '" +
                          text + "'");
  return count;
}

long long count_ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

ControlPlane::ControlPlane(Store& calls, Store& heartbeats, std::uint32_t rank,
                           std::uint32_t world_size, const DistributedConfig& timing,
                           AbortHandler on_abort, std::string store_host)
    : calls_(calls),
      heartbeats_(heartbeats),
      rank_(rank),
      world_(world_size),
      timing_(timing),
      on_abort_(std::move(on_abort)),
      store_host_(std::move(store_host)) {
  for (std::uint32_t r = 0; r < world_; ++r)
    if (r != rank_) peers_.push_back(r);
  heartbeats_.add(heartbeat_key(rank_), 1);
  heartbeat_thread_ = std::thread([this] { heartbeat_loop(); });
}

ControlPlane::~ControlPlane() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  heartbeat_thread_.join();
}

void ControlPlane::heartbeat_loop() {
  bool reported = false;
  const auto report = [&](const std::string& reason) {
    if (reported) return;
    reported = true;
    const std::string first = keep_cause(reason);
    if (on_abort_) on_abort_(first);
  };
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, timing_.heartbeat_interval, [this] { return stopping_; })) {
    lock.unlock();
    bool store_lost = false;
    try {
      heartbeats_.add(heartbeat_key(rank_), 1);
      if (!reported && !departed_ && heartbeats_.check({kAbortKey}))
        report(store_text(heartbeats_.get(kAbortKey, std::chrono::milliseconds(0))));
      if (!reported && watching_ && !departing_) {
        try {
          check_liveness(heartbeats_, watched_beats_, peers_, "exchanging proposals");
        } catch (const CollectiveError& e) {
          report(abort("rank " + std::to_string(rank_) + ": " + e.what()));
        }
      }
    } catch (const StoreError& e) {
      // A lost store (its host died) fails every rank: nothing can be coordinated any more. A
      // refused heartbeat would make this rank look dead to the others: say why instead.
      store_lost = e.kind() != StoreError::Kind::timeout;
      // Once every rank departed the run is over: a store gone then is no failure of it.
      if (store_lost && !departed_)
        report("rank " + std::to_string(rank_) + ": " + store_failure(e));
    } catch (const std::exception& e) {
      if (!departed_) report("rank " + std::to_string(rank_) + ": heartbeat failed: " + e.what());
    }
    lock.lock();
    if (store_lost) return;
  }
}

std::vector<std::string> ControlPlane::peer_keys(
    const std::function<std::string(std::uint32_t)>& key_of) const {
  std::vector<std::string> keys;
  for (const auto r : peers_) keys.push_back(key_of(r));
  return keys;
}

std::string ControlPlane::store_failure(const StoreError& e) const {
  if (e.kind() != StoreError::Kind::connection) return e.what();
  return "lost the store (" + store_host_ + " is dead or unreachable): " + e.what();
}

std::string ControlPlane::keep_cause(const std::string& cause) {
  std::lock_guard lock(cause_mutex_);
  if (!first_cause_) first_cause_ = cause;
  return *first_cause_;
}

std::optional<std::string> ControlPlane::first_cause() const {
  std::lock_guard lock(cause_mutex_);
  return first_cause_;
}

std::string ControlPlane::abort(const std::string& reason) {
  try {
    const auto result = heartbeats_.compare_and_set(kAbortKey, std::nullopt, store_bytes(reason));
    if (result.current) {
      // The abort key holds the run's first failure: it stands over any this rank learned of.
      const std::string first = store_text(*result.current);
      keep_cause(first);
      return first;
    }
  } catch (const StoreError&) {
    // The store is gone, and the abort key with it: what this rank learned first stands.
  }
  return keep_cause(reason);
}

std::optional<std::string> ControlPlane::abort_reason() {
  if (!heartbeats_.check({kAbortKey})) return std::nullopt;
  const std::string reason = store_text(heartbeats_.get(kAbortKey, std::chrono::milliseconds(0)));
  keep_cause(reason);
  return reason;
}

void ControlPlane::check_liveness(Store& store, PeerBeats& beats,
                                  const std::vector<std::uint32_t>& ranks,
                                  const std::string& what) {
  const auto now = Clock::now();
  for (const auto r : ranks) {
    std::optional<std::int64_t> count;
    const auto key = heartbeat_key(r);
    if (store.check({key}))
      count = heartbeat_count(store.get(key, std::chrono::milliseconds(0)), r);
    const auto [it, first_look] = beats.try_emplace(r, PeerBeat{count, now});
    PeerBeat& beat = it->second;
    if (first_look || beat.count != count) {
      beat = PeerBeat{count, now};
    } else if (now - beat.since > timing_.peer_timeout) {
      // A rank that left on purpose is not dead, but it will not take part either.
      const char* gone = store.check({finished_key(r)}) ? " has finished the run"
                         : store.check({left_key(r)})   ? " has left the aborted run"
                                                        : nullptr;
      if (gone) throw CollectiveError("rank " + std::to_string(r) + gone + " while " + what);
      throw CollectiveError("rank " + std::to_string(r) + " is dead: no heartbeat for " +
                            std::to_string(count_ms(now - beat.since)) + " ms (peer_timeout " +
                            std::to_string(timing_.peer_timeout.count()) + " ms) while " + what);
    }
  }
}

std::vector<std::vector<std::byte>> ControlPlane::wait_live(
    Publish publish, const std::vector<std::string>& keys,
    std::optional<Clock::time_point> deadline, const std::string& what, PeerBeats& beats,
    bool ends_with_run) {
  if (keys.empty()) {
    calls_.set(publish.key, publish.value);
    return {};
  }
  std::vector<std::string> missing_keys = keys;
  std::vector<std::uint32_t> missing_ranks = peers_;
  while (true) {
    auto slice = timing_.heartbeat_interval;
    if (deadline)
      slice = std::clamp(
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()),
          std::chrono::milliseconds(1), slice);
    try {
      // Setting the key again is harmless (same value) and brings every value back in the same
      // round trip. A timeout leaves the key set; any other failure fails the wait anyway.
      return calls_.set_and_wait(publish.key, publish.value, keys, slice);
    } catch (const StoreError& e) {
      if (e.kind() != StoreError::Kind::timeout) throw CollectiveError(store_failure(e));
    }
    if (auto reason = abort_reason()) throw CollectiveError("aborted: " + *reason);
    if (ends_with_run && departed_) throw CollectiveError("the run ended: every rank departed");
    std::vector<std::string> still_keys;
    std::vector<std::uint32_t> still_ranks;
    for (std::size_t i = 0; i < missing_keys.size(); ++i)
      if (!calls_.check({missing_keys[i]})) {
        still_keys.push_back(missing_keys[i]);
        still_ranks.push_back(missing_ranks[i]);
      }
    if (still_keys.empty()) continue;  // all there now: the next call returns at once
    missing_keys = std::move(still_keys);
    missing_ranks = std::move(still_ranks);
    check_liveness(calls_, beats, missing_ranks, "waiting for it to be " + what);
    if (deadline && Clock::now() >= *deadline)
      throw CollectiveError(rank_names(missing_ranks) + " not " + what + " by the deadline");
  }
}

std::vector<std::uint64_t> ControlPlane::ready(std::uint64_t sequence, std::uint64_t size,
                                               Clock::time_point deadline) {
  try {
    // Every rank saw the previous block's keys before it joined that block's last exchange, which
    // has completed: the block can go.
    if (rank_ == 0 && sequence % kReadyBlock == 0 && sequence > 0)
      calls_.erase_prefix(ready_block(sequence / kReadyBlock - 1));
    const auto keys = peer_keys([&](std::uint32_t r) { return ready_key(sequence, r); });
    const auto values =
        wait_live({ready_key(sequence, rank_), store_bytes(std::to_string(size))}, keys, deadline,
                  "ready for exchange " + std::to_string(sequence), beats_, /*ends_with_run=*/true);
    std::vector<std::uint64_t> sizes(world_, size);
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      const auto text = store_text(values[i]);
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), sizes[peers_[i]]);
      if (text.empty() || error != std::errc{} || end != text.data() + text.size())
        throw CollectiveError("rank " + std::to_string(peers_[i]) + "'s readiness for exchange " +
                              std::to_string(sequence) + " is malformed: '" + text + "'");
    }
    return sizes;
  } catch (const StoreError& e) {
    throw CollectiveError(store_failure(e));
  }
}

void ControlPlane::finish_epoch(std::uint64_t epoch, Clock::time_point deadline) {
  try {
    // A rank at this barrier has seen every rank pass the previous one (the epoch's rounds
    // needed them all): its keys can go.
    if (rank_ == 0 && epoch > 0) calls_.erase_prefix(epoch_done_block(epoch - 1));
    const auto keys =
        peer_keys([&](std::uint32_t r) { return epoch_done_block(epoch) + std::to_string(r); });
    const std::string what = "at the end of epoch " + std::to_string(epoch);
    wait_live({epoch_done_block(epoch) + std::to_string(rank_), store_bytes("1")}, keys, deadline,
              what, beats_);
    if (auto reason = abort_reason()) throw CollectiveError("aborted " + what + ": " + *reason);
  } catch (const StoreError& e) {
    throw CollectiveError(store_failure(e));
  }
}

void ControlPlane::depart(const Departure& departure, Clock::time_point deadline) {
  departing_ = true;
  try {
    const auto keys = peer_keys([&](std::uint32_t r) { return departure_key(r); });
    const auto values =
        wait_live({departure_key(rank_), store_bytes(encode_departure(departure))}, keys, deadline,
                  "departed at " + describe(departure), departure_beats_);
    std::vector<Departure> all(world_, departure);
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      const auto text = store_text(values[i]);
      const auto decoded = decode_departure(text);
      if (!decoded)
        throw CollectiveError("rank " + std::to_string(peers_[i]) + "'s departure is malformed: '" +
                              text + "'");
      all[peers_[i]] = *decoded;
    }
    if (auto disagreement = departure_disagreement(all)) throw CollectiveError(*disagreement);
  } catch (const StoreError& e) {
    throw CollectiveError(store_failure(e));
  }
  departed_ = true;
}

void ControlPlane::finish(bool wait_for_all) {
  try {
    if (!wait_for_all) return calls_.set(finished_key(rank_), store_bytes("1"));
    const auto keys = peer_keys([&](std::uint32_t r) { return finished_key(r); });
    wait_live({finished_key(rank_), store_bytes("1")}, keys, Clock::now() + timing_.connect_timeout,
              "finished", beats_);
  } catch (const StoreError& e) {
    throw CollectiveError(store_failure(e));
  }
}

void ControlPlane::leave_aborted(bool wait_for_others) {
  calls_.set(left_key(rank_), store_bytes("1"));
  if (!wait_for_others) return;
  std::vector<std::string> keys;
  for (std::uint32_t r = 0; r < world_; ++r)
    if (r != rank_ && !calls_.check({finished_key(r)})) keys.push_back(left_key(r));
  try {
    if (!keys.empty()) calls_.wait(keys, timing_.peer_timeout);
  } catch (const StoreError&) {
    // Some rank is dead or stuck: it has had its chance to read the abort.
  }
}

}  // namespace odbatch
