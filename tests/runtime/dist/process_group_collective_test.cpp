// The collective of ranks that are processes, its ranks as threads here (each with its own store
// connections and Gloo pairs over loopback, as separate processes would have): rank 0 hosts the
// store, every allgather returns every blob, an abort reaches the ranks blocked in an exchange,
// a rank that left is named, the epoch's end is a barrier that a failure breaks, a lost store
// stays the cause of every later error, and joining tells a lost store, a missing peer, a
// refused token and a timeout apart.
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/dist/local_launcher.hpp"
#include "odbatch/dist/process_group_collective.hpp"
#include "odbatch/store/tcp_store_client.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

// Generous: only catches hangs.
constexpr auto kBound = 10s;

DistributedConfig loopback_timing() {
  DistributedConfig timing;
  timing.heartbeat_interval = 50ms;
  timing.peer_timeout = 500ms;
  timing.connect_timeout = 10s;
  timing.store_timeout = 5s;
  timing.exchange_timeout = 5s;
  return timing;
}

DistEnv rank_env(std::uint32_t rank, std::uint32_t world, std::uint16_t port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.store_port = port;  // the store rank 0 hosts
  env.run_id = "test";
  env.gloo_hostname = "127.0.0.1";
  return env;
}

// Every rank's collective, built concurrently (each waits for the others to join the mesh), on
// the store at `port`.
std::vector<std::unique_ptr<ProcessGroupCollective>> join_group(std::uint32_t world,
                                                                std::uint16_t port) {
  std::vector<std::future<std::unique_ptr<ProcessGroupCollective>>> joining;
  for (std::uint32_t r = 0; r < world; ++r)
    joining.push_back(std::async(std::launch::async, [=] {
      return std::make_unique<ProcessGroupCollective>(rank_env(r, world, port), loopback_timing());
    }));
  std::vector<std::unique_ptr<ProcessGroupCollective>> group;
  for (auto& j : joining) group.push_back(j.get());
  return group;
}

std::vector<std::unique_ptr<ProcessGroupCollective>> join_group(std::uint32_t world) {
  return join_group(world, free_tcp_port("127.0.0.1"));
}

// Destroys every rank's collective at once: rank 0's finish barrier waits for the others.
void leave_group(std::vector<std::unique_ptr<ProcessGroupCollective>>& group) {
  std::vector<std::future<void>> leaving;
  for (auto& member : group)
    leaving.push_back(std::async(std::launch::async, [&member] { member.reset(); }));
  for (auto& l : leaving) l.get();
}

Bytes blob(std::uint32_t rank, std::uint64_t round) {
  Bytes bytes((rank * 37 + round * 11) % 200);  // some of them empty
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(rank * 7 + round + i);
  return bytes;
}

// One round of `group`: every rank's blob reaches every rank.
void check_round(std::vector<std::unique_ptr<ProcessGroupCollective>>& group, std::uint64_t round) {
  std::vector<std::future<std::vector<Bytes>>> results;
  for (std::uint32_t r = 0; r < group.size(); ++r)
    results.push_back(std::async(std::launch::async, [&, r] {
      return group[r]->allgather(blob(r, round), Clock::now() + kBound);
    }));
  std::vector<Bytes> expected;
  for (std::uint32_t r = 0; r < group.size(); ++r) expected.push_back(blob(r, round));
  for (auto& result : results) CHECK(result.get() == expected);
}

std::string collective_error_of(std::future<std::vector<Bytes>>& result) {
  try {
    result.get();
  } catch (const CollectiveError& e) {
    return e.what();
  }
  FAIL("no CollectiveError");
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("every rank gets every rank's blob, round after round") {
  constexpr std::uint32_t kWorld = 3;
  auto group = join_group(kWorld);
  for (std::uint64_t round = 0; round < 30; ++round) check_round(group, round);
  leave_group(group);
}

TEST_CASE("several groups per rank (a training and an evaluation Pipeline) share rank 0's store") {
  // torchrun's variables only: every group finds the store at the same port, and rank 0 hosts
  // it once for all of them.
  constexpr std::uint32_t kWorld = 2;
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  auto training = join_group(kWorld, port);
  auto evaluation = join_group(kWorld, port);
  for (std::uint64_t round = 0; round < 5; ++round) {
    check_round(training, round);
    check_round(evaluation, round + 100);
  }
  // A group that ends clears its own keys only; the store stays while a group uses it.
  leave_group(evaluation);
  check_round(training, 5);
  auto another = join_group(kWorld, port);
  check_round(another, 0);
  check_round(training, 6);
  leave_group(training);
  check_round(another, 1);
  leave_group(another);
  // Once the last group has left, the port is free again and the next group hosts it anew.
  auto later = join_group(kWorld, port);
  check_round(later, 0);
  leave_group(later);
  // ... and it is gone with the last group.
  TcpStoreClientOptions client;
  client.port = port;
  client.connect_timeout = 300ms;
  CHECK_THROWS_AS(TcpStoreClient{client}, StoreError);
}

TEST_CASE("an abort reaches the ranks waiting for the round, with its reason") {
  constexpr std::uint32_t kWorld = 3;
  auto group = join_group(kWorld);
  std::vector<std::future<std::vector<Bytes>>> waiting;
  for (std::uint32_t r : {0u, 2u})
    waiting.push_back(std::async(std::launch::async, [&, r] {
      return group[r]->allgather(blob(r, 0), Clock::now() + 60s);
    }));
  std::this_thread::sleep_for(100ms);
  const auto start = Clock::now();
  group[1]->abort("rank 1: the trainer failed");
  for (auto& w : waiting) CHECK(contains(collective_error_of(w), "rank 1: the trainer failed"));
  CHECK(Clock::now() - start < kBound);
  leave_group(group);
}

TEST_CASE("a rank that has finished while another still expects a round is named") {
  auto group = join_group(2);
  // Rank 1 leaves as a finished rank does (no abort); rank 0 still expects a round.
  group[1].reset();
  const auto start = Clock::now();
  auto result = std::async(std::launch::async,
                           [&] { return group[0]->allgather(blob(0, 0), Clock::now() + 60s); });
  const auto error = collective_error_of(result);
  CHECK(contains(error, "rank 1 has finished the run"));
  CHECK(Clock::now() - start < kBound);
  group[0].reset();  // aborted: no finish barrier to wait for
}

TEST_CASE("the epoch's end waits for every rank, and fails when one fails instead") {
  auto group = join_group(3);
  {
    std::vector<std::future<void>> ending;
    for (auto& member : group)
      ending.push_back(std::async(std::launch::async,
                                  [&member] { member->finish_epoch(0, Clock::now() + kBound); }));
    for (auto& e : ending) e.get();
  }
  // Epoch 1: rank 2 fails before reaching its end; the others must not report success.
  std::vector<std::future<void>> ending;
  for (std::uint32_t r : {0u, 1u})
    ending.push_back(
        std::async(std::launch::async, [&, r] { group[r]->finish_epoch(1, Clock::now() + 60s); }));
  std::this_thread::sleep_for(100ms);
  group[2]->abort("rank 2: its trainer crashed");
  for (auto& e : ending) {
    try {
      e.get();
      FAIL("a rank reported the end of an epoch that another rank failed in");
    } catch (const CollectiveError& error) {
      CHECK(contains(error.what(), "rank 2: its trainer crashed"));
    }
  }
  leave_group(group);
}

TEST_CASE("the abort listener hears of another rank's failure while this rank is idle") {
  auto group = join_group(2);
  std::promise<std::string> heard;
  group[0]->set_abort_listener([&](const std::string& reason) { heard.set_value(reason); });
  group[1]->abort("rank 1: out of memory");
  auto reason = heard.get_future();
  REQUIRE(reason.wait_for(kBound) == std::future_status::ready);
  CHECK(contains(reason.get(), "rank 1: out of memory"));
  leave_group(group);
}

TEST_CASE("ranks departing at an agreed step end the run without a failure") {
  constexpr std::uint32_t kWorld = 3;
  auto group = join_group(kWorld);
  std::atomic<int> heard{0};
  for (auto& member : group) member->set_abort_listener([&](const std::string&) { ++heard; });
  // Ranks 0 and 1 are ahead: their next round is pending, then they depart. Rank 2 departs
  // later, as a slower trainer does; nobody may fail meanwhile, not even after peer_timeout.
  std::vector<std::future<std::vector<Bytes>>> pending;
  for (std::uint32_t r : {0u, 1u})
    pending.push_back(std::async(std::launch::async, [&, r] {
      return group[r]->allgather(blob(r, 0), Clock::now() + 60s);
    }));
  std::vector<std::future<void>> departing;
  for (std::uint32_t r : {0u, 1u})
    departing.push_back(
        std::async(std::launch::async, [&, r] { group[r]->depart(4, 17, Clock::now() + 60s); }));
  std::this_thread::sleep_for(3 * loopback_timing().peer_timeout);
  const auto start = Clock::now();
  group[2]->depart(4, 17, Clock::now() + kBound);
  for (auto& d : departing) CHECK_NOTHROW(d.get());
  for (auto& p : pending) CHECK(contains(collective_error_of(p), "departing"));
  CHECK(Clock::now() - start < kBound);
  CHECK_THROWS_AS(group[2]->allgather(blob(2, 1), Clock::now() + kBound), CollectiveError);
  leave_group(group);
  CHECK(heard == 0);
}

TEST_CASE("ranks departing at different steps fail, naming both") {
  auto group = join_group(2);
  auto first = std::async(std::launch::async, [&] { group[0]->depart(0, 9, Clock::now() + 60s); });
  std::string error;
  try {
    group[1]->depart(0, 10, Clock::now() + kBound);
  } catch (const CollectiveError& e) {
    error = e.what();
  }
  CHECK_MESSAGE(contains(error, "rank 0 departs at step 9 of epoch 0 but rank 1 at step 10"),
                error);
  CHECK_THROWS_AS(first.get(), CollectiveError);
  leave_group(group);
}

TEST_CASE("a rank that does not depart is named when the others' deadline passes") {
  auto group = join_group(2);
  std::string error;
  try {
    group[0]->depart(1, 3, Clock::now() + 300ms);
  } catch (const CollectiveError& e) {
    error = e.what();
  }
  CHECK_MESSAGE(contains(error, "rank 1 not departed at step 3 of epoch 1 by the deadline"), error);
  // The run is aborted: rank 1's next round fails with the cause.
  auto next = std::async(std::launch::async,
                         [&] { return group[1]->allgather(blob(1, 0), Clock::now() + kBound); });
  CHECK(contains(collective_error_of(next), "not departed"));
  leave_group(group);
}

TEST_CASE("ranks joining when the store goes away fail promptly, naming it, before round 0") {
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  TcpStoreServerOptions server_options;
  server_options.port = port;
  auto server = std::make_unique<TcpStoreServer>(server_options);
  // Ranks 0 and 1 of 3 join and wait for rank 2, which never comes; then the store goes.
  std::vector<std::future<std::string>> joining;
  for (std::uint32_t r = 0; r < 2; ++r)
    joining.push_back(std::async(std::launch::async, [=] {
      auto env = rank_env(r, 3, 1);
      env.store_address = "127.0.0.1:" + std::to_string(port);
      try {
        ProcessGroupCollective member(env, loopback_timing());
      } catch (const CollectiveError& e) {
        return std::string(e.what());
      }
      return std::string("joined");
    }));
  std::this_thread::sleep_for(300ms);
  const auto start = Clock::now();
  server.reset();
  for (auto& j : joining) {
    const auto error = j.get();
    CHECK_MESSAGE(contains(error,
                           "cannot join the group before round 0: lost the store (the "
                           "standalone store is dead or unreachable)"),
                  error);
  }
  CHECK(Clock::now() - start < kBound);
}

TEST_CASE("a standalone store is used when the DistEnv names one (ODBATCH_STORE_ADDR)") {
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  TcpStoreServerOptions server_options;
  server_options.port = port;
  auto server = std::make_unique<TcpStoreServer>(server_options);
  std::vector<std::future<std::unique_ptr<ProcessGroupCollective>>> joining;
  for (std::uint32_t r = 0; r < 2; ++r)
    joining.push_back(std::async(std::launch::async, [=] {
      auto env = rank_env(r, 2, 1);
      env.store_address = "127.0.0.1:" + std::to_string(port);
      // MASTER_PORT is not where the store is: nobody may host one there.
      return std::make_unique<ProcessGroupCollective>(env, loopback_timing());
    }));
  std::vector<std::unique_ptr<ProcessGroupCollective>> group;
  for (auto& j : joining) group.push_back(j.get());
  auto other = std::async(std::launch::async,
                          [&] { return group[1]->allgather(blob(1, 5), Clock::now() + kBound); });
  const auto mine = group[0]->allgather(blob(0, 5), Clock::now() + kBound);
  CHECK(mine == other.get());
  leave_group(group);
  // Rank 0 cleared the run's keys after the finish barrier.
  TcpStoreClientOptions client;
  client.port = port;
  TcpStoreClient look(client);
  CHECK(look.erase_prefix("run/test/") == 0);
}

TEST_CASE("once the store's host is lost, every later error carries that cause") {
  auto group = join_group(2);
  std::promise<std::string> heard;
  group[1]->set_abort_listener([&](const std::string& reason) { heard.set_value(reason); });
  group[0]->stop_hosted_store();  // as when rank 0 dies: its store goes with it
  auto reason = heard.get_future();
  REQUIRE(reason.wait_for(kBound) == std::future_status::ready);
  const std::string cause = reason.get();
  CHECK_MESSAGE(contains(cause, "lost the store (rank 0 is dead or unreachable)"), cause);
  // The abort key went with the store: the later errors must still say why.
  auto next = std::async(std::launch::async,
                         [&] { return group[1]->allgather(blob(1, 0), Clock::now() + kBound); });
  const auto error = collective_error_of(next);
  CHECK_MESSAGE(contains(error, "exchange 0 after an abort"), error);
  CHECK_MESSAGE(contains(error, cause), error);
  std::string departing;
  try {
    group[1]->depart(0, 1, Clock::now() + kBound);
  } catch (const CollectiveError& e) {
    departing = e.what();
  }
  CHECK_MESSAGE(contains(departing, cause), departing);
  leave_group(group);
}

// What a rank's constructor throws, or "joined".
std::string join_error(const DistEnv& env, const DistributedConfig& timing) {
  try {
    ProcessGroupCollective member(env, timing);
  } catch (const CollectiveError& e) {
    return e.what();
  }
  return "joined";
}

TEST_CASE("joining: a peer that dies before publishing its Gloo address is named, not the store") {
  constexpr std::uint32_t kWorld = 3;
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  auto timing = loopback_timing();
  timing.store_timeout = 1s;  // the mesh's deadline: max(peer_timeout, store_timeout)
  std::vector<std::future<std::string>> joining;
  for (std::uint32_t r = 0; r < 2; ++r)
    joining.push_back(std::async(std::launch::async,
                                 [=] { return join_error(rank_env(r, kWorld, port), timing); }));
  {
    // Rank 2 joins the store, then dies before it builds its side of the mesh.
    TcpStoreClientOptions client;
    client.port = port;
    client.connect_timeout = 10s;
    TcpStoreClient rank2(client);
    rank2.set("run/test/group/0/joined/2", store_bytes("1"));
  }
  const auto start = Clock::now();
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto error = joining[r].get();
    CAPTURE(r);
    CHECK_MESSAGE(contains(error, "rank " + std::to_string(r) +
                                      " of 3: cannot join the group before round 0"),
                  error);
    CHECK_MESSAGE(contains(error, "rank 2 did not publish its Gloo address"), error);
    CHECK_MESSAGE(!contains(error, "lost the store"), error);
  }
  CHECK(Clock::now() - start < kBound);
}

TEST_CASE("joining: a rank that never comes is named at connect_timeout") {
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  auto timing = loopback_timing();
  timing.connect_timeout = 500ms;
  const auto error = join_error(rank_env(0, 2, port), timing);
  CHECK_MESSAGE(contains(error, "rank 1 did not join within connect_timeout_ms (500 ms)"), error);
  CHECK_MESSAGE(!contains(error, "lost the store"), error);
}

TEST_CASE("joining: a wrong token is an authentication failure, not a lost store") {
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  TcpStoreServerOptions server_options;
  server_options.port = port;
  server_options.token = "right";
  TcpStoreServer server(server_options);
  auto env = rank_env(1, 2, 1);
  env.store_address = "127.0.0.1:" + std::to_string(port);
  env.store_token = "wrong";
  const auto start = Clock::now();
  const auto error = join_error(env, loopback_timing());
  CHECK_MESSAGE(contains(error,
                         "rank 1 of 2: cannot join the group before round 0: "
                         "authentication failed: the store refused this rank's token"),
                error);
  CHECK_MESSAGE(!contains(error, "lost the store"), error);
  CHECK(Clock::now() - start < kBound);  // refused at once, not retried
}

TEST_CASE("joining: a store that never answers is a timeout, not a lost store") {
  const std::uint16_t port = free_tcp_port("127.0.0.1");
  auto env = rank_env(1, 2, 1);
  env.store_address = "127.0.0.1:" + std::to_string(port);  // nobody listens there
  auto timing = loopback_timing();
  timing.connect_timeout = 300ms;
  const auto error = join_error(env, timing);
  CHECK_MESSAGE(contains(error,
                         "rank 1 of 2: cannot join the group before round 0: timed out: "
                         "no store answered within connect_timeout_ms (300 ms"),
                error);
  CHECK_MESSAGE(!contains(error, "lost the store"), error);
}

}  // namespace
}  // namespace odbatch
