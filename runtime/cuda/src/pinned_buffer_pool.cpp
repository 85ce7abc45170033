#include "odbatch/cuda/pinned_buffer_pool.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "capacity_headroom.hpp"
#include "odbatch/cuda/cuda_error.hpp"

namespace odbatch {

// The pool's storage: it lives until the pool object and every buffer out of it are gone, and
// then every buffer is back in `free`.
struct PinnedBuffer::Shared {
  struct Block {
    std::byte* data = nullptr;
    std::size_t capacity = 0;
  };

  explicit Shared(std::size_t max) : max_buffers(max) {}
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  ~Shared() {
    for (const Block& block : free) cudaFreeHost(block.data);
  }

  void give_back(std::byte* data, std::size_t capacity) {
    {
      std::lock_guard lock(mutex);
      free.push_back({data, capacity});
    }
    returned.notify_one();
  }

  const std::size_t max_buffers;
  mutable std::mutex mutex;
  std::condition_variable returned;
  std::vector<Block> free;
  std::size_t buffers = 0;  // held, free, or being allocated
  std::uint64_t host_allocations = 0;
};

PinnedBuffer::PinnedBuffer(std::shared_ptr<Shared> pool, std::byte* data, std::size_t capacity)
    : pool_(std::move(pool)), data_(data), capacity_(capacity) {}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : pool_(std::move(other.pool_)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::move(other.pool_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  reset();
}

void PinnedBuffer::reset() {
  if (pool_) pool_->give_back(data_, capacity_);
  pool_.reset();
  data_ = nullptr;
  capacity_ = 0;
}

PinnedBufferPool::PinnedBufferPool(std::size_t max_buffers) {
  if (max_buffers == 0)
    throw std::invalid_argument("PinnedBufferPool: max_buffers must be at least 1");
  shared_ = std::make_shared<PinnedBuffer::Shared>(max_buffers);
}

PinnedBufferPool::~PinnedBufferPool() = default;

PinnedBuffer PinnedBufferPool::acquire(std::size_t bytes) {
  auto& shared = *shared_;
  std::byte* replaced = nullptr;
  {
    std::unique_lock lock(shared.mutex);
    shared.returned.wait(
        lock, [&] { return !shared.free.empty() || shared.buffers < shared.max_buffers; });
    auto& free = shared.free;
    auto fit = free.end();
    for (auto it = free.begin(); it != free.end(); ++it)
      if (it->capacity >= bytes && (fit == free.end() || it->capacity < fit->capacity)) fit = it;
    if (fit != free.end()) {
      const auto block = *fit;
      free.erase(fit);
      return PinnedBuffer(shared_, block.data, block.capacity);
    }
    if (shared.buffers < shared.max_buffers) {
      ++shared.buffers;
    } else {
      // Every free buffer is too small: the largest makes way for one that fits.
      const auto largest =
          std::max_element(free.begin(), free.end(),
                           [](const auto& a, const auto& b) { return a.capacity < b.capacity; });
      replaced = largest->data;
      free.erase(largest);
    }
  }
  // cudaHostAlloc takes milliseconds, and both calls may wait for the device's queued work: outside
  // the lock, so that buffers can come back meanwhile.
  const std::size_t capacity = capacity_with_headroom(bytes);
  void* data = nullptr;
  const cudaError_t freed = replaced ? cudaFreeHost(replaced) : cudaSuccess;
  const cudaError_t allocated =
      freed == cudaSuccess ? cudaHostAlloc(&data, capacity, cudaHostAllocDefault) : freed;
  if (allocated != cudaSuccess) {
    {
      std::lock_guard lock(shared.mutex);
      --shared.buffers;
    }
    shared.returned.notify_one();
    check_cuda_call(allocated, freed != cudaSuccess
                                   ? std::string("cudaFreeHost")
                                   : "cudaHostAlloc (" + std::to_string(capacity) + " bytes)");
  }
  {
    std::lock_guard lock(shared.mutex);
    ++shared.host_allocations;
  }
  return PinnedBuffer(shared_, static_cast<std::byte*>(data), capacity);
}

std::size_t PinnedBufferPool::max_buffers() const {
  return shared_->max_buffers;
}

std::size_t PinnedBufferPool::buffers() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->buffers;
}

std::uint64_t PinnedBufferPool::host_allocations() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->host_allocations;
}

}  // namespace odbatch
