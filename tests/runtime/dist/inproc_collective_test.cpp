#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "odbatch/dist/inproc_collective.hpp"

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

TEST_CASE("ranks departing at an agreed step end pending collectives without an abort") {
  auto group = InprocGroup::create(3);
  auto r0 = group->member(0);
  auto r1 = group->member(1);
  auto r2 = group->member(2);
  std::string pending_error;
  std::thread ahead([&] {
    try {
      r0->allgather(blob(0, 0), Collective::Clock::now() + 10s);
    } catch (const CollectiveError& e) {
      pending_error = e.what();
    }
  });
  std::thread early([&] { r1->depart(2, 5, Collective::Clock::now() + 10s); });
  std::thread leaving([&] { r0->depart(2, 5, Collective::Clock::now() + 10s); });
  std::this_thread::sleep_for(20ms);
  CHECK_NOTHROW(r2->depart(2, 5, Collective::Clock::now() + 10s));
  early.join();
  leaving.join();
  ahead.join();
  CHECK_MESSAGE(pending_error.find("every rank departed at step 5 of epoch 2") != std::string::npos,
                pending_error);
  CHECK_THROWS_WITH_AS(r2->allgather(blob(2, 1), Collective::Clock::now() + 10s),
                       doctest::Contains("the run ended"), CollectiveError);
}

TEST_CASE("a departure the ranks disagree on, or one never made, fails the group") {
  SUBCASE("different steps") {
    auto group = InprocGroup::create(2);
    auto r0 = group->member(0);
    auto r1 = group->member(1);
    std::thread first([&] {
      CHECK_THROWS_WITH_AS(r0->depart(0, 4, Collective::Clock::now() + 10s),
                           doctest::Contains("but rank 1 at step 6 of epoch 0"), CollectiveError);
    });
    std::this_thread::sleep_for(20ms);
    CHECK_THROWS_WITH_AS(r1->depart(0, 6, Collective::Clock::now() + 10s),
                         doctest::Contains("rank 0 departs at step 4 of epoch 0"), CollectiveError);
    first.join();
  }
  SUBCASE("a rank that never departs") {
    auto group = InprocGroup::create(3);
    auto r0 = group->member(0);
    auto r1 = group->member(1);
    std::thread other([&] {
      CHECK_THROWS_AS(r1->depart(0, 4, Collective::Clock::now() + 10s), CollectiveError);
    });
    CHECK_THROWS_WITH_AS(r0->depart(0, 4, Collective::Clock::now() + 50ms),
                         doctest::Contains("rank 2 not departed at step 4 of epoch 0"),
                         CollectiveError);
    other.join();
  }
}
