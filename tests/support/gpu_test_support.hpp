#pragma once
// What the GPU tests share: whether CUDA sees enough GPUs, so that they report Skipped without them
// (test_skip.hpp), and fail where ODBATCH_TESTS_REQUIRE lists "gpu" (tools/gpu-check.sh).
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "test_skip.hpp"

namespace odbatch::test {

inline int visible_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

}  // namespace odbatch::test

// Skips the current test case unless CUDA sees at least `count` GPUs (the need "gpu" for one,
// "gpus" for more).
#define ODBATCH_REQUIRE_GPUS(count)                                                            \
  if (::odbatch::test::visible_gpus() < (count))                                               \
  ODBATCH_SKIP_TEST((count) > 1 ? "gpus" : "gpu", "needs " << (count) << " GPU(s); CUDA sees " \
                                                           << ::odbatch::test::visible_gpus())
