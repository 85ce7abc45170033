#pragma once
// Recycles batches: a batch the trainer drops goes back to the pool with its buffers' capacity,
// so steady-state collation does not allocate; but for pixel buffers over kKeptPixelBytes, which
// float32 pixel_values of image-heavy steps reach (24 bytes a pixel), and which every pooled
// batch would otherwise keep at the largest size it ever held.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "odbatch/batch/batch.hpp"

namespace odbatch {

class BatchPool : public std::enable_shared_from_this<BatchPool> {
 public:
  static constexpr std::size_t kKeptPixelBytes = std::size_t{16} << 20;

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
      if (b->pixel_values_.capacity() > kKeptPixelBytes) PatchValueBytes().swap(b->pixel_values_);
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
