#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "odbatch/batch/bounded_queue.hpp"

using namespace odbatch;
using namespace std::chrono_literals;

TEST_CASE("items pass in order and close ends the consumer after the queued items") {
  BoundedQueue<int> q(2);
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) REQUIRE(q.push(i));
    q.close();
  });
  int expected = 0;
  while (auto item = q.pop()) CHECK(*item == expected++);
  producer.join();
  CHECK(expected == 100);
}

TEST_CASE("a full queue blocks the producer until the consumer pops") {
  BoundedQueue<int> q(1);
  REQUIRE(q.push(1));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.push(2);
    pushed = true;
  });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(pushed.load());
  CHECK(q.pop() == 1);
  producer.join();
  CHECK(pushed.load());
  CHECK(q.pop() == 2);
}

TEST_CASE("a failure wakes both sides and the consumer rethrows it") {
  BoundedQueue<int> q(1);
  REQUIRE(q.push(1));
  std::thread producer([&] { CHECK_FALSE(q.push(2)); });
  std::this_thread::sleep_for(10ms);
  q.fail(std::make_exception_ptr(std::runtime_error("rank 1 died in round 3")));
  producer.join();
  CHECK_THROWS_WITH(q.pop(), "rank 1 died in round 3");
}

TEST_CASE("pop_until gives up at its deadline") {
  BoundedQueue<int> q(1);
  bool timed_out = false;
  CHECK_FALSE(q.pop_until(std::chrono::steady_clock::now() + 10ms, &timed_out).has_value());
  CHECK(timed_out);
}
