#pragma once
// A bounded blocking queue between a producer thread and a consumer thread (the emitter and the
// trainer). Every wait has a way out: close() ends it after the queued items, fail() ends it at
// once with an error that the consumer rethrows, and pops may take a deadline.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>

namespace odbatch {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // Blocks while full. Returns false when the queue was closed or failed (the item is dropped:
  // nobody will consume it).
  bool push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_ || closed_ || error_; });
    if (closed_ || error_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Blocks while empty. nullopt once closed and drained; rethrows the failure's error.
  std::optional<T> pop() { return pop_until(std::chrono::steady_clock::time_point::max()); }

  // As pop(), but gives up at `deadline` and returns nullopt with `timed_out` set.
  std::optional<T> pop_until(std::chrono::steady_clock::time_point deadline,
                             bool* timed_out = nullptr) {
    std::unique_lock lock(mutex_);
    const auto ready = [&] { return !items_.empty() || closed_ || error_; };
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      not_empty_.wait(lock, ready);
    } else if (!not_empty_.wait_until(lock, deadline, ready)) {
      if (timed_out) *timed_out = true;
      return std::nullopt;
    }
    if (error_) std::rethrow_exception(error_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // No more items will come; the consumer drains what is queued.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Ends the queue with an error: queued items are discarded and every pop rethrows it. The first
  // failure wins.
  void fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(error);
    items_.clear();
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Reopens an empty queue for the next epoch (no thread may be waiting).
  void reopen() {
    std::lock_guard lock(mutex_);
    items_.clear();
    closed_ = false;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
  std::exception_ptr error_;
};

}  // namespace odbatch
