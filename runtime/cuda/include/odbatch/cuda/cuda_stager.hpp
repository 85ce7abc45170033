#pragma once
// Moves the loader's batches to the GPU ahead of the step that uses them (docs/cuda.md).
//
// stage() copies a host Batch into a pinned buffer and issues one asynchronous host-to-device copy
// of it, on a stream of the stager's own, into one of N device slots. wait() makes the trainer's
// compute stream wait for that copy (without blocking the host) and hands out the DeviceBatch.
// release() records, on the compute stream, that the trainer's work on it has been issued; the
// slot is filled again only after that work has run, which the copy stream waits for on the
// device. So the copy of step i+1 runs while step i computes.
//
// Not thread safe: one trainer thread drives a stager. Its device is the one current when it is
// constructed; every call works on that device and leaves the caller's current device as it was.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "odbatch/batch/batch.hpp"
#include "odbatch/cuda/device_batch.hpp"

namespace odbatch {

struct CudaStagerOptions {
  // Device slots (at least 1): how many batches may be staged or held by the trainer at once.
  // Two give double buffering.
  std::size_t slots = 2;
  // Device bytes each slot starts with; a larger batch grows its slot (with headroom).
  std::size_t initial_slot_bytes = 0;
};

struct CudaStagerStats {
  std::uint64_t batches_staged = 0;
  std::uint64_t bytes_staged = 0;  // blocks copied to the device, padding between fields included
  std::uint64_t device_allocations = 0;  // slot blocks allocated (cudaMallocAsync or cudaMalloc)
  std::uint64_t host_allocations = 0;    // cudaHostAlloc calls of the pinned pool
};

class CudaStager {
 public:
  explicit CudaStager(CudaStagerOptions options = {});
  CudaStager(const CudaStager&) = delete;
  CudaStager& operator=(const CudaStager&) = delete;
  // Waits for the copy stream and every released slot's compute work, then frees everything. A
  // batch handed out and not released must no longer be in use on the device.
  ~CudaStager();

  // Copies `batch` into a free slot: the host batch may be dropped as soon as this returns. Throws
  // std::logic_error when every slot is staged or held (wait for and release one first), and
  // CudaError. Blocks the host while the slot's previous copy has not left its pinned buffer, and
  // when the batch is larger than the slot's buffers: cudaHostAlloc and cudaFreeHost for its pinned
  // buffer may wait for all work queued on the device, the trainer's included. The device block
  // grows in the copy stream's order (cudaMallocAsync) without a host wait where the device has
  // memory pools; elsewhere its growth waits for the slot's compute work and may wait for the
  // whole device (cudaFree, cudaMalloc). A stream of batches of similar size allocates only at
  // first. On failure the copy stream has finished whatever was queued, and the slot stays free.
  void stage(const Batch& batch);
  void stage(const std::shared_ptr<const Batch>& batch);

  // The oldest staged batch. Work issued on `compute_stream` after this call sees its copy
  // complete; the host does not wait. The reference stays valid until release(). Throws
  // std::logic_error when nothing is staged. `compute_stream` must not be capturing a CUDA graph
  // during wait() or release(): their event wait and record order live copies against live work,
  // and a capture would reject them or turn them into graph nodes (pulling the copy stream in).
  DeviceBatch& wait(cudaStream_t compute_stream);

  // The trainer is done issuing work on `batch` (a reference wait() returned) on `compute_stream`;
  // its slot is overwritten only after that work. Throws std::logic_error for a batch not held.
  void release(const DeviceBatch& batch, cudaStream_t compute_stream);

  std::size_t slots() const;
  std::size_t staged() const;  // staged and not yet handed out by wait()
  std::size_t held() const;    // handed out by wait() and not yet released
  // The stream the copies run on (non-blocking with respect to the legacy default stream).
  cudaStream_t copy_stream() const;
  int device() const;
  CudaStagerStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace odbatch
