#include <doctest/doctest.h>

#include <time.h>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "odbatch/batch/worker_threads.hpp"

using namespace odbatch;

TEST_CASE("worker threads run every task exactly once per job, job after job") {
  for (const std::size_t helpers : {0, 1, 3}) {
    CAPTURE(helpers);
    WorkerThreads threads(helpers);
    CHECK(threads.helpers() == helpers);
    for (const std::size_t count : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> calls(count);
      threads.run(count, [&](std::size_t i) { calls[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) CHECK(calls[i].load() == 1);
    }
  }
}

TEST_CASE(
    "worker threads share a job's tasks among the helpers and the caller, and count their CPU") {
  WorkerThreads threads(3);
  std::atomic<int> active{0};
  std::atomic<int> most{0};
  // Each task waits until four run at once (or long enough): four at once are four threads.
  threads.run(4, [&](std::size_t) {
    const int running = active.fetch_add(1) + 1;
    int seen = most.load();
    while (running > seen && !most.compare_exchange_weak(seen, running)) {
    }
    for (int spin = 0; spin < 2000 && most.load() < 4; ++spin)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Then 2 ms of CPU on this thread, which the helpers' count must include.
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    const auto until = now.tv_sec * 1'000'000'000LL + now.tv_nsec + 2'000'000;
    while (now.tv_sec * 1'000'000'000LL + now.tv_nsec < until)
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    active.fetch_sub(1);
  });
  REQUIRE(most.load() == 4);  // so each thread ran one task
  CHECK(threads.helper_cpu_ns() >= 3 * 2'000'000ULL);
}

TEST_CASE("a task's exception reaches the caller after the job's other tasks have run") {
  WorkerThreads threads(2);
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH_AS(threads.run(50,
                                   [&](std::size_t i) {
                                     ran.fetch_add(1);
                                     if (i == 10) throw std::runtime_error("task 10 failed");
                                   }),
                       "task 10 failed", std::runtime_error);
  CHECK(ran.load() == 50);
  // The threads serve the next job as before.
  std::atomic<int> again{0};
  threads.run(20, [&](std::size_t) { again.fetch_add(1); });
  CHECK(again.load() == 20);
}
