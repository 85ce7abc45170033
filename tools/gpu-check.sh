#!/usr/bin/env bash
# On a machine with GPUs: builds with CUDA and NCCL and runs the GPU tests (the trainer's NCCL
# communicator bootstrapped through the store, the epoch handshake agreeing and disagreeing, a
# join that times out) on every visible GPU, then prints PASS or FAIL.
# Usage: tools/gpu-check.sh [BUILD_DIR]     (BUILD_DIR defaults to <repo>/build-gpu)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build-gpu"}
binary=$build_dir/tests/runtime/odbatch_runtime_nccl_tests

fail() {
  echo "gpu-check: FAIL: $*"
  exit 1
}

"$root/tools/install-deps.sh" || fail "dependencies could not be installed"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DODBATCH_WITH_CUDA=ON \
  >/dev/null || fail "configure (needs nvcc and NCCL)"
cmake --build "$build_dir" --target odbatch_runtime_nccl_tests >/dev/null || fail "build"
nvidia-smi -L || fail "no GPU visible (nvidia-smi)"
# --no-skip: the tests skip themselves where no GPU is visible; here they must run.
"$binary" --no-skip || fail "a test failed (output above)"
echo "gpu-check: PASS"
