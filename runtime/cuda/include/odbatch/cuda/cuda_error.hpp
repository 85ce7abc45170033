#pragma once
// CUDA runtime failures as exceptions that name the call that failed.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string_view>

namespace odbatch {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError "CALL: <cudaGetErrorString> (<error name>)" unless `result` is cudaSuccess. The
// runtime's last error is cleared first, so that a later unrelated call does not report it again.
void check_cuda_call(cudaError_t result, std::string_view call);

}  // namespace odbatch
