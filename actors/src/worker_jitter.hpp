#pragma once
// Fault injection (pipeline.worker_jitter_us): a pseudo-random delay before a worker reports each
// task, so that text and image parts reach the joiner in another order and the stages race
// differently. The batches must not change; determinism tests rely on that. The delays follow
// from the seed, the worker and the task count, so a failing run can be repeated.
#include <chrono>
#include <cstdint>
#include <thread>

#include "odbatch/core/stable_hash.hpp"

namespace odbatch::actors {

class WorkerJitter {
 public:
  WorkerJitter() = default;  // no delay
  WorkerJitter(std::uint32_t max_us, std::uint64_t seed, std::uint64_t worker)
      : max_us_(max_us), seed_(seed), worker_(worker) {}

  // Sleeps 0..max_us microseconds on the worker's scheduler thread (it also delays whatever else
  // that thread would run, which is part of the stress); nothing when max_us is 0.
  void delay() {
    if (max_us_ == 0) return;
    const std::uint64_t us = reduce_to_range(stable_hash({seed_, worker_, tasks_++}), max_us_ + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }

 private:
  std::uint32_t max_us_ = 0;
  std::uint64_t seed_ = 0;
  std::uint64_t worker_ = 0;
  std::uint64_t tasks_ = 0;
};

}  // namespace odbatch::actors
