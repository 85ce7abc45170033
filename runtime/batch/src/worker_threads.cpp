#include "odbatch/batch/worker_threads.hpp"

#include <time.h>

#include <utility>

namespace odbatch {
namespace {

// As metrics' thread_cpu_ns(), which this layer may not reach: config depends on batch and must
// not reach metrics.
std::uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace

WorkerThreads::WorkerThreads(std::size_t helpers) {
  threads_.reserve(helpers);
  for (std::size_t i = 0; i < helpers; ++i) threads_.emplace_back([this] { help(); });
}

WorkerThreads::~WorkerThreads() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  job_posted_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void WorkerThreads::run(std::size_t count, const std::function<void(std::size_t)>& task) {
  std::unique_lock lock(mutex_);
  task_ = &task;
  count_ = count;
  next_ = 0;
  failure_ = nullptr;
  ++job_;
  if (count > 1) job_posted_.notify_all();
  work(lock);
  job_done_.wait(lock, [&] { return running_ == 0; });
  task_ = nullptr;
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

std::uint64_t WorkerThreads::helper_cpu_ns() const {
  std::lock_guard lock(mutex_);
  return helper_cpu_ns_;
}

void WorkerThreads::help() {
  std::unique_lock lock(mutex_);
  std::size_t joined = 0;
  while (true) {
    job_posted_.wait(lock, [&] { return stopping_ || job_ != joined; });
    if (stopping_) return;
    joined = job_;
    const std::uint64_t start = thread_cpu_ns();
    work(lock);
    // Counted before the lock is let go, so by the time run() returns.
    helper_cpu_ns_ += thread_cpu_ns() - start;
  }
}

void WorkerThreads::work(std::unique_lock<std::mutex>& lock) {
  while (task_ && next_ < count_) {
    const std::size_t index = next_++;
    ++running_;
    lock.unlock();
    std::exception_ptr failure;
    try {
      (*task_)(index);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure && !failure_) failure_ = failure;
    if (--running_ == 0 && next_ >= count_) job_done_.notify_all();
  }
}

}  // namespace odbatch
