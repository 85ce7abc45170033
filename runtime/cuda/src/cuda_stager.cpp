#include "odbatch/cuda/cuda_stager.hpp"

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "capacity_headroom.hpp"
#include "current_device_guard.hpp"
#include "odbatch/cuda/batch_block_layout.hpp"
#include "odbatch/cuda/cuda_error.hpp"
#include "odbatch/cuda/pinned_buffer_pool.hpp"

namespace odbatch {
namespace {

// free: may be filled (the trainer's work on its last batch, if any, is fenced by `released`);
// staged: its copy is issued; held: wait() handed its batch to the trainer.
enum class SlotState : std::uint8_t { free, staged, held };

struct Slot {
  SlotState state = SlotState::free;
  // From the device's memory pool (cudaMallocAsync on the copy stream) where it has one, else from
  // cudaMalloc.
  std::byte* device_block = nullptr;
  std::size_t device_capacity = 0;
  // The pinned block of the last copy, kept until that copy has read it.
  PinnedBuffer pinned;
  // On the copy stream after the copy; on the compute stream at release(). Waiting for an event
  // never recorded returns at once, so a slot's first use needs no special case.
  cudaEvent_t copied = nullptr;
  cudaEvent_t released = nullptr;
  DeviceBatch batch;
};

}  // namespace

struct CudaStager::State {
  explicit State(std::size_t slot_count) : slots(slot_count), pool(slot_count) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Runs also when construction failed halfway, so every handle may still be null.
  ~State() {
    try {
      CurrentDeviceGuard guard(device);
      if (copy_stream) cudaStreamSynchronize(copy_stream);
      for (Slot& slot : slots) {
        if (slot.released) cudaEventSynchronize(slot.released);
        if (slot.device_block) {
          if (stream_ordered_allocation)
            cudaFreeAsync(slot.device_block, copy_stream);
          else
            cudaFree(slot.device_block);
        }
        if (slot.copied) cudaEventDestroy(slot.copied);
        if (slot.released) cudaEventDestroy(slot.released);
        slot.pinned.reset();
      }
      if (copy_stream) {
        cudaStreamSynchronize(copy_stream);
        cudaStreamDestroy(copy_stream);
      }
    } catch (const CudaError&) {
      // No device to return to: nothing of it is left to free either.
    }
  }

  // Replaces the slot's block with one of at least `bytes`. The copy stream must already wait for
  // `slot.released`: with a memory pool the old block is freed and the new one allocated in that
  // stream's order, after the trainer's work on the slot, and the host does not wait. Without one,
  // the host waits for that work, and cudaFree and cudaMalloc may wait for the whole device.
  void grow(Slot& slot, std::size_t bytes) {
    const std::size_t capacity = capacity_with_headroom(bytes);
    void* block = nullptr;
    if (stream_ordered_allocation) {
      if (slot.device_block)
        check_cuda_call(cudaFreeAsync(slot.device_block, copy_stream), "cudaFreeAsync (slot)");
      slot.device_block = nullptr;
      slot.device_capacity = 0;
      check_cuda_call(cudaMallocAsync(&block, capacity, copy_stream),
                      "cudaMallocAsync (slot of " + std::to_string(capacity) + " bytes)");
    } else {
      check_cuda_call(cudaEventSynchronize(slot.released), "cudaEventSynchronize (slot release)");
      if (slot.device_block) check_cuda_call(cudaFree(slot.device_block), "cudaFree (slot)");
      slot.device_block = nullptr;
      slot.device_capacity = 0;
      check_cuda_call(cudaMalloc(&block, capacity),
                      "cudaMalloc (slot of " + std::to_string(capacity) + " bytes)");
    }
    slot.device_block = static_cast<std::byte*>(block);
    slot.device_capacity = capacity;
    ++stats.device_allocations;
  }

  int device = 0;
  cudaStream_t copy_stream = nullptr;
  bool stream_ordered_allocation = false;  // the device supports cudaMallocAsync
  std::vector<Slot> slots;
  // One pinned buffer per slot at most: a slot gives its buffer back before it takes another.
  PinnedBufferPool pool;
  std::deque<std::size_t> staged_order;  // slots in the order their batches were staged
  std::size_t next_slot = 0;             // where the search for a free slot starts (round robin)
  CudaStagerStats stats;
};

CudaStager::CudaStager(CudaStagerOptions options) {
  if (options.slots == 0) throw std::invalid_argument("CudaStager: slots must be at least 1");
  state_ = std::make_unique<State>(options.slots);
  check_cuda_call(cudaGetDevice(&state_->device), "cudaGetDevice");
  int pools = 0;
  check_cuda_call(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, state_->device),
                  "cudaDeviceGetAttribute (memory pools)");
  state_->stream_ordered_allocation = pools != 0;
  check_cuda_call(cudaStreamCreateWithFlags(&state_->copy_stream, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags (copy stream)");
  // Blocking sync: a host waiting for a copy or the trainer's work sleeps instead of spinning on
  // a core the loader needs.
  constexpr unsigned kEventFlags = cudaEventDisableTiming | cudaEventBlockingSync;
  for (Slot& slot : state_->slots) {
    check_cuda_call(cudaEventCreateWithFlags(&slot.copied, kEventFlags),
                    "cudaEventCreateWithFlags (copied)");
    check_cuda_call(cudaEventCreateWithFlags(&slot.released, kEventFlags),
                    "cudaEventCreateWithFlags (released)");
    if (options.initial_slot_bytes > 0) state_->grow(slot, options.initial_slot_bytes);
  }
}

CudaStager::~CudaStager() = default;

void CudaStager::stage(const std::shared_ptr<const Batch>& batch) {
  if (!batch) throw std::invalid_argument("CudaStager::stage: no batch");
  stage(*batch);
}

void CudaStager::stage(const Batch& batch) {
  State& s = *state_;
  const std::size_t count = s.slots.size();
  std::size_t index = count;
  for (std::size_t i = 0; i < count && index == count; ++i)
    if (s.slots[(s.next_slot + i) % count].state == SlotState::free)
      index = (s.next_slot + i) % count;
  if (index == count)
    throw std::logic_error("CudaStager::stage: all " + std::to_string(count) +
                           " slots are staged or held; wait() for and release() one first");
  CurrentDeviceGuard guard(s.device);
  Slot& slot = s.slots[index];
  const BatchBlockLayout layout = BatchBlockLayout::of(batch);

  if (slot.pinned) {
    check_cuda_call(cudaEventSynchronize(slot.copied), "cudaEventSynchronize (previous copy)");
    slot.pinned.reset();
  }
  // Held by the slot before the copy is issued, so that no failure below returns it to the pool
  // while the copy may still read it.
  slot.pinned = s.pool.acquire(layout.total_bytes);
  write_batch_block(batch, layout, slot.pinned.data());

  try {
    // The trainer's work on the slot's previous batch comes first, on the device: before the
    // block is freed (when it grows) and before it is overwritten.
    check_cuda_call(cudaStreamWaitEvent(s.copy_stream, slot.released, 0),
                    "cudaStreamWaitEvent (copy stream on slot release)");
    if (layout.total_bytes > slot.device_capacity) s.grow(slot, layout.total_bytes);
    if (layout.total_bytes > 0)
      check_cuda_call(cudaMemcpyAsync(slot.device_block, slot.pinned.data(), layout.total_bytes,
                                      cudaMemcpyHostToDevice, s.copy_stream),
                      "cudaMemcpyAsync (batch to device)");
    check_cuda_call(cudaEventRecord(slot.copied, s.copy_stream), "cudaEventRecord (copied)");
    describe_device_batch(batch, layout, slot.device_block, slot.batch);
  } catch (...) {
    // A copy may be queued without its `copied` event: the next stage() of this slot would then
    // overwrite the pinned buffer while it is read. Let everything queued finish first.
    cudaStreamSynchronize(s.copy_stream);
    throw;
  }
  // Queued before the state changes, so that a failure leaves the slot free, not stuck staged.
  s.staged_order.push_back(index);
  slot.state = SlotState::staged;
  s.next_slot = (index + 1) % count;
  ++s.stats.batches_staged;
  s.stats.bytes_staged += layout.total_bytes;
}

DeviceBatch& CudaStager::wait(cudaStream_t compute_stream) {
  State& s = *state_;
  if (s.staged_order.empty()) throw std::logic_error("CudaStager::wait: no batch is staged");
  CurrentDeviceGuard guard(s.device);
  Slot& slot = s.slots[s.staged_order.front()];
  check_cuda_call(cudaStreamWaitEvent(compute_stream, slot.copied, 0),
                  "cudaStreamWaitEvent (compute stream on copy)");
  s.staged_order.pop_front();
  slot.state = SlotState::held;
  return slot.batch;
}

void CudaStager::release(const DeviceBatch& batch, cudaStream_t compute_stream) {
  State& s = *state_;
  for (Slot& slot : s.slots) {
    if (&slot.batch != &batch) continue;
    if (slot.state != SlotState::held) break;
    CurrentDeviceGuard guard(s.device);
    check_cuda_call(cudaEventRecord(slot.released, compute_stream),
                    "cudaEventRecord (released, on the compute stream)");
    slot.state = SlotState::free;
    return;
  }
  throw std::logic_error(
      "CudaStager::release: the batch is not one wait() handed out and not "
      "yet released");
}

std::size_t CudaStager::slots() const {
  return state_->slots.size();
}

std::size_t CudaStager::staged() const {
  return state_->staged_order.size();
}

std::size_t CudaStager::held() const {
  std::size_t count = 0;
  for (const Slot& slot : state_->slots) count += slot.state == SlotState::held ? 1 : 0;
  return count;
}

cudaStream_t CudaStager::copy_stream() const {
  return state_->copy_stream;
}

int CudaStager::device() const {
  return state_->device;
}

CudaStagerStats CudaStager::stats() const {
  CudaStagerStats stats = state_->stats;
  stats.host_allocations = state_->pool.host_allocations();
  return stats;
}

}  // namespace odbatch
