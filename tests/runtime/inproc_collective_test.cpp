#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "odbatch/runtime/inproc_collective.hpp"

using namespace odbatch;
using namespace std::chrono_literals;

namespace {

std::vector<std::byte> blob(std::uint32_t rank, std::uint32_t round) {
  return std::vector<std::byte>(rank + 1, static_cast<std::byte>(rank * 16 + round));
}

}  // namespace

TEST_CASE("every rank receives every rank's blob, round after round") {
  constexpr std::uint32_t kWorld = 4, kRounds = 200;
  auto group = InprocGroup::create(kWorld);
  std::vector<std::thread> ranks;
  std::atomic<int> mismatches{0};
  for (std::uint32_t r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r, member = group->member(r)]() mutable {
      for (std::uint32_t round = 0; round < kRounds; ++round) {
        const auto all = member->allgather(blob(r, round), Collective::Clock::now() + 10s);
        for (std::uint32_t peer = 0; peer < kWorld; ++peer)
          if (all[peer] != blob(peer, round)) ++mismatches;
      }
    });
  for (auto& t : ranks) t.join();
  CHECK(mismatches == 0);
}

TEST_CASE("a missing rank makes the others fail at the deadline, naming it") {
  auto group = InprocGroup::create(3);
  auto r0 = group->member(0);
  auto r1 = group->member(1);
  std::string other_error;
  std::thread t([&] {
    try {
      r1->allgather(blob(1, 0), Collective::Clock::now() + 10s);
    } catch (const CollectiveError& e) {
      other_error = e.what();
    }
  });
  CHECK_THROWS_WITH_AS(r0->allgather(blob(0, 0), Collective::Clock::now() + 50ms),
                       doctest::Contains("waiting for rank 2"), CollectiveError);
  t.join();  // rank 1 is woken by the abort, long before its own deadline
  CHECK(other_error.find("waiting for rank 2") != std::string::npos);
}

TEST_CASE("an abort fails pending and later collectives with the first reason") {
  auto group = InprocGroup::create(2);
  auto r0 = group->member(0);
  auto r1 = group->member(1);
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    r1->abort("trainer stopped in round 7");
  });
  CHECK_THROWS_WITH_AS(r0->allgather(blob(0, 0), Collective::Clock::now() + 10s),
                       doctest::Contains("trainer stopped in round 7"), CollectiveError);
  t.join();
  r0->abort("a later reason");
  CHECK_THROWS_WITH_AS(r1->allgather(blob(1, 0), Collective::Clock::now() + 10s),
                       doctest::Contains("trainer stopped in round 7"), CollectiveError);
}

TEST_CASE("a single rank gathers its own blob") {
  auto group = InprocGroup::create(1);
  auto member = group->member(0);
  const auto all = member->allgather(blob(0, 3), Collective::Clock::now() + 1s);
  REQUIRE(all.size() == 1);
  CHECK(all[0] == blob(0, 3));
  CHECK_THROWS_AS(group->member(1), std::invalid_argument);
}
