// The control plane over a loopback TCP store, its ranks as threads: readiness waits for every
// rank, a rank whose heartbeats stop is named dead after peer_timeout, the first abort
// wins and reaches every rank's heartbeat thread, and the finish barrier waits for every rank.
#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/control_plane.hpp"
#include "odbatch/store/prefix_store.hpp"
#include "store_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

DistributedConfig fast_timing() {
  DistributedConfig timing;
  timing.heartbeat_interval = 50ms;
  timing.peer_timeout = 400ms;
  return timing;
}

// One rank: two connections to the store, the run's namespace on each, its control plane.
class RankPlane {
 public:
  RankPlane(std::uint16_t port, std::uint32_t rank, std::uint32_t world,
            const DistributedConfig& timing = fast_timing())
      : calls_client_(test::client_options(port)),
        beats_client_(test::client_options(port)),
        calls_(PrefixStore::for_run("test", calls_client_)),
        beats_(PrefixStore::for_run("test", beats_client_)),
        plane_(calls_, beats_, rank, world, timing, [this](const std::string& reason) {
          std::lock_guard lock(mutex_);
          aborts_.push_back(reason);
        }) {}

  ControlPlane& plane() { return plane_; }
  std::vector<std::string> aborts() {
    std::lock_guard lock(mutex_);
    return aborts_;
  }

 private:
  TcpStoreClient calls_client_;
  TcpStoreClient beats_client_;
  PrefixStore calls_;
  PrefixStore beats_;
  std::mutex mutex_;
  std::vector<std::string> aborts_;
  ControlPlane plane_;
};

std::string collective_error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const CollectiveError& e) {
    return e.what();
  }
  FAIL("no CollectiveError");
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("readiness returns once every rank is ready, round after round") {
  TcpStoreServer server(test::loopback_server_options());
  constexpr std::uint32_t kWorld = 3;
  std::vector<std::unique_ptr<RankPlane>> ranks;
  for (std::uint32_t r = 0; r < kWorld; ++r)
    ranks.push_back(std::make_unique<RankPlane>(server.port(), r, kWorld));
  TcpStoreClient look(test::client_options(server.port()));
  constexpr std::uint64_t kExchanges = 130;  // past two blocks of readiness keys
  for (std::uint64_t sequence = 0; sequence < kExchanges; ++sequence) {
    // Ranks 1 and 2 wait until rank 0, the last, is ready too.
    std::vector<std::future<void>> waiting;
    for (std::uint32_t r = 1; r < kWorld; ++r)
      waiting.push_back(std::async(std::launch::async, [&, r] {
        ranks[r]->plane().ready(sequence, 100 * sequence + r, Clock::now() + 5s);
      }));
    if (sequence == 0) {
      std::this_thread::sleep_for(100ms);
      for (auto& w : waiting) CHECK(w.wait_for(0s) == std::future_status::timeout);
    }
    ranks[0]->plane().ready(sequence, 100 * sequence, Clock::now() + 5s);
    for (auto& w : waiting) w.get();
  }
  // The readiness keys of finished blocks are gone; the current block's stay, with the sizes.
  CHECK(!look.check({"run/test/ready/0/0/0"}));
  CHECK(!look.check({"run/test/ready/1/127/2"}));
  CHECK(store_text(look.get("run/test/ready/2/129/1", 0ms)) == "12901");
}

TEST_CASE("a rank whose heartbeats stop is named dead after peer_timeout") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane alive(server.port(), 0, 2);
  {
    // Rank 1 joins, beats a while, then goes away without a word.
    RankPlane gone(server.port(), 1, 2);
    std::this_thread::sleep_for(200ms);
  }
  const auto start = Clock::now();
  const auto error = collective_error_of([&] { alive.plane().ready(0, 10, Clock::now() + 30s); });
  const double waited = test::seconds_since(start);
  CHECK(contains(error, "rank 1 is dead"));
  CHECK(contains(error, "peer_timeout 400 ms"));
  CHECK(contains(error, "ready for exchange 0"));
  CHECK(waited >= 0.4);
  CHECK(waited < test::kGenerousBound.count());
}

TEST_CASE("a live rank that is not ready fails readiness at the deadline, named") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane ready(server.port(), 0, 3);
  RankPlane late(server.port(), 1, 3);
  RankPlane later(server.port(), 2, 3);
  auto late_ready =
      std::async(std::launch::async, [&] { return late.plane().ready(0, 1, Clock::now() + 5s); });
  const auto error = collective_error_of([&] { ready.plane().ready(0, 10, Clock::now() + 300ms); });
  CHECK(contains(error, "rank 2 not ready for exchange 0 by the deadline"));
  ready.plane().abort("rank 0 gave up");
  CHECK(contains(collective_error_of([&] { late_ready.get(); }), "aborted: rank 0 gave up"));
}

TEST_CASE("the first abort wins and reaches every rank's heartbeat thread") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane a(server.port(), 0, 3);
  RankPlane b(server.port(), 1, 3);
  RankPlane c(server.port(), 2, 3);
  CHECK(a.plane().abort("rank 0: first") == "rank 0: first");
  CHECK(b.plane().abort("rank 1: second") == "rank 0: first");
  CHECK(c.plane().abort_reason() == "rank 0: first");
  const auto start = Clock::now();
  while ((a.aborts().empty() || b.aborts().empty() || c.aborts().empty()) &&
         Clock::now() - start < test::kGenerousBound)
    std::this_thread::sleep_for(10ms);
  for (auto* rank : {&a, &b, &c})
    CHECK(rank->aborts() == std::vector<std::string>{"rank 0: first"});
}

TEST_CASE("watching peers during an exchange aborts the run when one dies") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane watcher(server.port(), 0, 2);
  auto gone = std::make_unique<RankPlane>(server.port(), 1, 2);
  watcher.plane().watch_peers(true);
  std::this_thread::sleep_for(150ms);
  CHECK(watcher.aborts().empty());  // alive: nothing to report
  gone.reset();
  const auto start = Clock::now();
  while (watcher.aborts().empty() && Clock::now() - start < test::kGenerousBound)
    std::this_thread::sleep_for(10ms);
  REQUIRE(watcher.aborts().size() == 1);
  CHECK(contains(watcher.aborts()[0], "rank 0: rank 1 is dead"));
  CHECK(watcher.plane().abort_reason() == watcher.aborts()[0]);
}

TEST_CASE("the finish barrier waits for every rank") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane host(server.port(), 0, 2);
  RankPlane other(server.port(), 1, 2);
  std::atomic<bool> finished{false};
  auto barrier = std::async(std::launch::async, [&] {
    host.plane().finish(/*wait_for_all=*/true);
    finished = true;
  });
  std::this_thread::sleep_for(200ms);
  CHECK(!finished);
  other.plane().finish(/*wait_for_all=*/false);
  barrier.get();
  CHECK(finished);
}

TEST_CASE("a lost store is reported once as an abort") {
  auto server = std::make_unique<TcpStoreServer>(test::loopback_server_options());
  RankPlane rank(server->port(), 1, 2);
  server.reset();
  const auto start = Clock::now();
  while (rank.aborts().empty() && Clock::now() - start < test::kGenerousBound)
    std::this_thread::sleep_for(10ms);
  REQUIRE(rank.aborts().size() == 1);
  CHECK(contains(rank.aborts()[0], "rank 1: lost the store"));
}

TEST_CASE("once the store is lost, abort() returns the first cause, not the later failure") {
  auto server = std::make_unique<TcpStoreServer>(test::loopback_server_options());
  RankPlane rank(server->port(), 1, 2);
  server.reset();
  const auto start = Clock::now();
  while (rank.aborts().empty() && Clock::now() - start < test::kGenerousBound)
    std::this_thread::sleep_for(10ms);
  REQUIRE(rank.aborts().size() == 1);
  const std::string first = rank.aborts()[0];
  // The abort key went with the store: the cause must survive here.
  CHECK(rank.plane().first_cause() == first);
  CHECK(rank.plane().abort("rank 1: exchange 4 after an abort") == first);
  CHECK(rank.plane().abort("rank 1: departing after an abort") == first);
}

TEST_CASE("the abort key's reason is the first cause of every rank that reads it") {
  TcpStoreServer server(test::loopback_server_options());
  RankPlane a(server.port(), 0, 2);
  RankPlane b(server.port(), 1, 2);
  CHECK_FALSE(b.plane().first_cause());
  CHECK(a.plane().abort("rank 0: first") == "rank 0: first");
  CHECK(a.plane().first_cause() == "rank 0: first");
  CHECK(b.plane().abort_reason() == "rank 0: first");
  CHECK(b.plane().first_cause() == "rank 0: first");
}

}  // namespace
}  // namespace odbatch
