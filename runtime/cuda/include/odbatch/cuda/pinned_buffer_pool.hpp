#pragma once
// Page-locked host buffers (cudaHostAlloc), reused: the device copies from them asynchronously and
// at full bandwidth, and allocating them is too slow to do per step. At most `max_buffers` exist at
// once; acquire() waits for one to be returned beyond that. Thread safe.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace odbatch {

class PinnedBufferPool;

// One buffer, held by one owner at a time; it returns to its pool when destroyed. Buffers keep
// their pool's storage alive, so they may outlive the PinnedBufferPool object.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();

  std::byte* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }
  explicit operator bool() const { return data_ != nullptr; }

  // Gives the buffer back to its pool now; it is empty afterwards.
  void reset();

 private:
  friend class PinnedBufferPool;
  struct Shared;
  PinnedBuffer(std::shared_ptr<Shared> pool, std::byte* data, std::size_t capacity);

  std::shared_ptr<Shared> pool_;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class PinnedBufferPool {
 public:
  explicit PinnedBufferPool(std::size_t max_buffers);
  PinnedBufferPool(const PinnedBufferPool&) = delete;
  PinnedBufferPool& operator=(const PinnedBufferPool&) = delete;
  ~PinnedBufferPool();

  // A buffer of at least `bytes`: the smallest free one that fits; else a new one while fewer
  // than max_buffers exist; else a free one reallocated larger. Blocks while max_buffers are held.
  // New buffers get headroom, so that slightly larger requests later still fit. Allocating or
  // reallocating (cudaHostAlloc, cudaFreeHost) may also wait for all work queued on the current
  // device, as page-locked allocation synchronizes implicitly; reuse does not. Throws CudaError.
  PinnedBuffer acquire(std::size_t bytes);

  std::size_t max_buffers() const;
  // Buffers that exist now (held or free), and cudaHostAlloc calls made so far.
  std::size_t buffers() const;
  std::uint64_t host_allocations() const;

 private:
  std::shared_ptr<PinnedBuffer::Shared> shared_;
};

}  // namespace odbatch
