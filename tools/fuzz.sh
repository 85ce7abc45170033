#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, docs/fuzzing.md) with clang, ASan and UBSan in a build
# dir of their own and runs each for SECONDS (default 60): the ctest tests labelled fuzz. Prints
# each target's runs and corpus; fails when a target crashes, leaks, hangs or runs out of memory,
# with the input kept in BUILD_DIR/tests/fuzz/<target>/crashes/.
# Usage: tools/fuzz.sh [SECONDS]     ODBATCH_FUZZ_JOBS: targets fuzzed at once (default 1);
#                                    ODBATCH_FUZZ_BUILD_DIR: default <repo>/build-fuzz
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
jobs=${ODBATCH_FUZZ_JOBS:-1}
build_dir=${ODBATCH_FUZZ_BUILD_DIR:-"$root/build-fuzz"}
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number" >&2; exit 2 ;; esac

"$root/tools/install-deps.sh"
# The seeds come from the real dataset.
"$root/tools/prepare-data.sh"
start=$(date +%s)
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DODBATCH_FUZZ=ON \
  -DODBATCH_SANITIZE=address,undefined -DODBATCH_WITH_CUDA=OFF -DODBATCH_WERROR=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
  -DODBATCH_FUZZ_SECONDS="$seconds" >/dev/null
nice -n 10 cmake --build "$build_dir" --parallel "$(nproc)" --target odbatch_fuzzers
echo "fuzz: built in $(( $(date +%s) - start )) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
nice -n 10 ctest --test-dir "$build_dir" -L fuzz --parallel "$jobs" --output-on-failure \
  >"$build_dir/fuzz-ctest.log" 2>&1 || status=$?
# run_fuzzer.sh's summary line of each target, then ctest's verdicts.
grep -h '^odbatch_fuzz_[a-z_]*: [0-9?]* runs' "$build_dir"/tests/fuzz/*/fuzz-summary.txt || true
if [ "$status" -ne 0 ]; then
  cat "$build_dir/fuzz-ctest.log"
  echo "fuzz: FAILED; crash inputs: $build_dir/tests/fuzz/<target>/crashes/" >&2
  exit 1
fi
echo "fuzz: every target ran $seconds s without a crash ($(( $(date +%s) - start )) s in all)"
