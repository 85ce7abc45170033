#include "odbatch/cuda/cuda_stream.hpp"

#include "odbatch/cuda/cuda_error.hpp"

namespace odbatch {

CudaStream::CudaStream() {
  check_cuda_call(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags");
}

CudaStream::~CudaStream() {
  cudaStreamDestroy(stream_);
}

void CudaStream::synchronize() const {
  check_cuda_call(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

}  // namespace odbatch
