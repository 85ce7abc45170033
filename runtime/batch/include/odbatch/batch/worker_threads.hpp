#pragma once
// A fixed set of helper threads that run a job's tasks beside the caller and return once all are
// done: how the emitter makes a batch's pixel_values on several cores. Tasks are CPU work on
// memory the caller owns, so the wait ends when they do.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace odbatch {

class WorkerThreads {
 public:
  // `helpers` threads besides the caller's (0: run() works alone on the caller's thread).
  explicit WorkerThreads(std::size_t helpers);
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  std::size_t helpers() const { return threads_.size(); }
  // CPU time the helpers have spent on tasks so far, for the stage that owns them to count.
  std::uint64_t helper_cpu_ns() const;

  // Calls task(i) once for every i in [0, count), on the helpers and the caller, and returns when
  // every call has returned; then rethrows the first exception a task threw (the other tasks
  // still run). One run at a time.
  void run(std::size_t count, const std::function<void(std::size_t)>& task);

 private:
  void help();
  // Claims and runs tasks of the current job until none is left.
  void work(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  std::condition_variable job_posted_;
  std::condition_variable job_done_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t count_ = 0;
  std::size_t next_ = 0;
  std::size_t running_ = 0;  // tasks claimed and not yet returned
  std::size_t job_ = 0;      // counts the jobs posted, so a helper joins each one once
  std::exception_ptr failure_;
  std::uint64_t helper_cpu_ns_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace odbatch
