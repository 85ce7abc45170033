#pragma once
// What the GPU tests share: whether CUDA sees a GPU, so that they skip cleanly without one, and
// fail clearly under --no-skip.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

namespace odbatch::test {

inline int visible_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

inline const bool kNoGpu = visible_gpus() == 0;

// Under --no-skip without a GPU: a clear failure rather than a crash.
inline void require_gpu() {
  REQUIRE_MESSAGE(visible_gpus() > 0, "no GPU is visible to CUDA");
}

}  // namespace odbatch::test
