#!/usr/bin/env bash
# On a machine with GPUs: builds with CUDA and NCCL and runs the GPU tests: the NCCL ones (the
# trainer's communicator bootstrapped through the store, the epoch handshake agreeing and
# disagreeing, a join that times out) with one rank per visible GPU, and the staging ones (batches
# staged to the device, double buffering, slot growth, pinned-buffer reuse) on device 0; then the
# staging benchmark, whose H2D bandwidth against a plain cudaMemcpy from pinned memory and
# hidden-copy ratio it prints; then PASS or FAIL.
# Usage: tools/gpu-check.sh [BUILD_DIR]     (BUILD_DIR defaults to <repo>/build-gpu)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build-gpu"}
nccl_tests=$build_dir/tests/runtime/cuda/odbatch_nccl_tests
staging_tests=$build_dir/tests/runtime/cuda/odbatch_cuda_staging_tests
staging_bench=$build_dir/bench/odbatch_bench_cuda_staging
bench_json=$build_dir/cuda-staging-bench.json

fail() {
  echo "gpu-check: FAIL: $*"
  exit 1
}

"$root/tools/install-deps.sh" || fail "dependencies could not be installed"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DODBATCH_WITH_CUDA=ON \
  >/dev/null || fail "configure (needs nvcc and NCCL)"
cmake --build "$build_dir" --target odbatch_nccl_tests odbatch_cuda_staging_tests \
  odbatch_bench_cuda_staging >/dev/null || fail "build"
nvidia-smi -L || fail "no GPU visible (nvidia-smi)"
# The tests skip themselves where too few GPUs are visible; here a skip is a failure (of the
# cases needing several GPUs, only where several are visible).
gpus=$(nvidia-smi -L | grep -c '^GPU')
export ODBATCH_TESTS_REQUIRE=gpu
[ "$gpus" -ge 2 ] && ODBATCH_TESTS_REQUIRE=gpu,gpus
"$nccl_tests" || fail "an NCCL test failed (output above)"
"$staging_tests" || fail "a staging test failed (output above)"
"$staging_bench" --out "$bench_json" >/dev/null || fail "the staging benchmark failed"
jq -e '.skipped == false' "$bench_json" >/dev/null || fail "the staging benchmark saw no GPU"
jq -r '
  "H2D: the stager \(.h2d.stager_gbps) GB/s, cudaMemcpy from pinned memory (peak) \(.h2d.peak_gbps) GB/s: \(.h2d.stager_vs_peak * 100 | round) % of peak (packing on the host alone: \(.h2d.host_pack_gbps) GB/s; \(.batch.block_bytes) bytes a batch)",
  "hidden copy: a step with staging takes \(.overlap.staged_vs_compute_only) x a step without copies (\(.overlap.staged_step_ms) ms against \(.overlap.compute_only_step_ms) ms; copy then compute on one stream: \(.overlap.serial_step_ms) ms; \(.overlap.hidden_fraction * 100 | round) % of the copy hidden)"
' "$bench_json" || fail "the staging benchmark's report is malformed ($bench_json)"
echo "gpu-check: PASS"
