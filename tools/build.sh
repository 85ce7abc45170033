#!/usr/bin/env bash
# Configures and builds odbatch with Ninja. Usage: tools/build.sh [BUILD_DIR] [extra cmake args...]
# ODBATCH_BUILD_TARGETS (space-separated) builds those targets only; by default, everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build"}
shift || true
cmake -S "$root" -B "$build_dir" -G Ninja -DODBATCH_WERROR=ON "$@"
targets=()
for target in ${ODBATCH_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" --parallel "$(nproc)" "${targets[@]}"
