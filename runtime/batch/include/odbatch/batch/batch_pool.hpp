#pragma once
// Recycles batches: a batch the trainer drops goes back to the pool with its buffers' capacity,
// so steady-state collation does not allocate.
#include <memory>
#include <mutex>
#include <vector>

#include "odbatch/batch/batch.hpp"

namespace odbatch {

class BatchPool : public std::enable_shared_from_this<BatchPool> {
 public:
  static std::shared_ptr<BatchPool> create() { return std::shared_ptr<BatchPool>(new BatchPool); }

  // A batch to fill; when its last owner lets go it returns here (the pool stays alive as long as
  // any of its batches does).
  std::shared_ptr<Batch> acquire() {
    std::unique_ptr<Batch> batch;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        batch = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!batch) batch = std::make_unique<Batch>();
    return std::shared_ptr<Batch>(batch.release(), [pool = shared_from_this()](Batch* b) {
      std::lock_guard lock(pool->mutex_);
      pool->free_.emplace_back(b);
    });
  }

 private:
  BatchPool() = default;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Batch>> free_;
};

}  // namespace odbatch
