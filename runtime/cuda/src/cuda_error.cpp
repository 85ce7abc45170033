#include "odbatch/cuda/cuda_error.hpp"

#include <string>

namespace odbatch {

void check_cuda_call(cudaError_t result, std::string_view call) {
  if (result == cudaSuccess) return;
  cudaGetLastError();
  throw CudaError(std::string(call) + ": " + cudaGetErrorString(result) + " (" +
                  cudaGetErrorName(result) + ")");
}

}  // namespace odbatch
