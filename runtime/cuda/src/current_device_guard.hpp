#pragma once
// Makes a device current for a scope and restores the caller's device after it.
#include <cuda_runtime_api.h>

#include "odbatch/cuda/cuda_error.hpp"

namespace odbatch {

class CurrentDeviceGuard {
 public:
  explicit CurrentDeviceGuard(int device) {
    check_cuda_call(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
    changed_ = previous_ != device;
  }
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;
  ~CurrentDeviceGuard() {
    if (changed_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace odbatch
