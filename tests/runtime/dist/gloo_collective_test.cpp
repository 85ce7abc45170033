// The Gloo backend with its ranks as threads of this process, each with its own TCP device on
// loopback, meeting through Gloo's in-memory rendezvous store.
#include <doctest/doctest.h>
#include <gloo/rendezvous/hash_store.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "odbatch/dist/gloo_collective.hpp"

using namespace odbatch;
using namespace std::chrono_literals;

namespace {

// Rank r's blob of round k: its length varies with both and is 0 for some (rank, round).
std::vector<std::byte> blob(std::uint32_t rank, std::uint32_t round) {
  return std::vector<std::byte>((rank * 7 + round * 3) % 11 * 100,
                                static_cast<std::byte>(rank * 16 + round));
}

// Builds the mesh of `world` ranks concurrently (joining blocks until every rank joined).
std::vector<std::unique_ptr<GlooCollective>> mesh(gloo::rendezvous::Store& store,
                                                  std::uint32_t world) {
  std::vector<std::future<std::unique_ptr<GlooCollective>>> joining;
  for (std::uint32_t r = 0; r < world; ++r)
    joining.push_back(std::async(std::launch::async, [&store, r, world] {
      return std::make_unique<GlooCollective>(store, r, world, GlooOptions{});
    }));
  std::vector<std::unique_ptr<GlooCollective>> members;
  for (auto& j : joining) members.push_back(j.get());
  return members;
}

}  // namespace

TEST_CASE("gloo: every rank receives every rank's blob, round after round") {
  constexpr std::uint32_t kWorld = 4, kRounds = 50;
  gloo::rendezvous::HashStore store;
  auto members = mesh(store, kWorld);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> ranks;
  for (std::uint32_t r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r] {
      for (std::uint32_t round = 0; round < kRounds; ++round) {
        const auto all = members[r]->allgather(blob(r, round), Collective::Clock::now() + 30s);
        for (std::uint32_t peer = 0; peer < kWorld; ++peer)
          if (all[peer] != blob(peer, round)) ++mismatches;
      }
    });
  for (auto& t : ranks) t.join();
  CHECK(mismatches == 0);
  CHECK(members[2]->rank() == 2);
  CHECK(members[2]->world_size() == kWorld);
}

TEST_CASE("gloo: a rank that does not take part makes the others fail at the deadline") {
  gloo::rendezvous::HashStore store;
  auto members = mesh(store, 3);
  // Ranks 0 and 1 exchange; rank 2 never calls.
  auto r1 = std::async(std::launch::async, [&] {
    return members[1]->allgather(blob(1, 0), Collective::Clock::now() + 300ms);
  });
  const auto start = Collective::Clock::now();
  CHECK_THROWS_WITH_AS(members[0]->allgather(blob(0, 0), Collective::Clock::now() + 300ms),
                       doctest::Contains("rank 2"), CollectiveError);
  CHECK(Collective::Clock::now() - start < 10s);
  CHECK_THROWS_AS(r1.get(), CollectiveError);
  // The group is unusable afterwards, and says so.
  CHECK_THROWS_WITH_AS(members[0]->allgather(blob(0, 1), Collective::Clock::now() + 1s),
                       doctest::Contains("earlier exchange"), CollectiveError);
}

TEST_CASE("gloo: abort wakes a rank blocked in the exchange") {
  gloo::rendezvous::HashStore store;
  auto members = mesh(store, 3);
  // Ranks 0 and 1 wait for rank 2, which never comes; rank 0 aborts (as the coordinator does when
  // it learns of a failure), rank 1 later.
  auto r0 = std::async(std::launch::async, [&] {
    return members[0]->allgather(blob(0, 0), Collective::Clock::now() + 60s);
  });
  auto r1 = std::async(std::launch::async, [&] {
    return members[1]->allgather(blob(1, 0), Collective::Clock::now() + 60s);
  });
  std::this_thread::sleep_for(50ms);
  const auto start = Collective::Clock::now();
  members[0]->abort("rank 0 saw a corrupt frame");
  CHECK_THROWS_WITH_AS(r0.get(), doctest::Contains("corrupt frame"), CollectiveError);
  members[1]->abort("rank 0 aborted");
  CHECK_THROWS_WITH_AS(r1.get(), doctest::Contains("rank 0 aborted"), CollectiveError);
  CHECK(Collective::Clock::now() - start < 30s);
  // An aborted rank closed its pairs: a peer exchanging with it later fails at once, not at its
  // deadline.
  const auto late = Collective::Clock::now();
  CHECK_THROWS_AS(members[2]->allgather(blob(2, 0), Collective::Clock::now() + 60s),
                  CollectiveError);
  CHECK(Collective::Clock::now() - late < 30s);
}

TEST_CASE("gloo: a pair broken before an exchange is named by the call that posts on it") {
  gloo::rendezvous::HashStore store;
  auto members = mesh(store, 3);
  // Rank 1 aborts between exchanges (closing its pairs), as a killed process's pairs close.
  members[1]->abort("rank 1 leaves");
  std::this_thread::sleep_for(200ms);
  // Rank 2 has heard from neither rank 0 nor rank 1 when posting on rank 1's pair fails: the
  // error names rank 1 alone.
  std::string error;
  try {
    members[2]->allgather(blob(2, 0), Collective::Clock::now() + 10s);
  } catch (const CollectiveError& e) {
    error = e.what();
  }
  CHECK_MESSAGE(error.find("rank 1:") != std::string::npos, error);
  CHECK_MESSAGE(error.find("ranks") == std::string::npos, error);
}

TEST_CASE("gloo: a single rank needs no mesh") {
  gloo::rendezvous::HashStore store;
  GlooCollective alone(store, 0, 1, GlooOptions{});
  const auto all = alone.allgather(blob(0, 3), Collective::Clock::now() + 1s);
  REQUIRE(all.size() == 1);
  CHECK(all[0] == blob(0, 3));
}

TEST_CASE("gloo: joining fails in time when a rank never comes") {
  gloo::rendezvous::HashStore store;
  GlooOptions options;
  options.connect_timeout = 300ms;
  CHECK_THROWS_WITH_AS(GlooCollective(store, 0, 2, options), doctest::Contains("Gloo mesh"),
                       CollectiveError);
}
