#pragma once
// A CUDA stream owned for its scope, created non-blocking (it never waits for the legacy default
// stream), as a trainer's compute stream or a benchmark's.
#include <cuda_runtime_api.h>

namespace odbatch {

class CudaStream {
 public:
  // Throws CudaError naming the call when the stream cannot be created.
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  // Waits for everything queued on it; throws CudaError.
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace odbatch
