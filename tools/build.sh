#!/usr/bin/env bash
# Configures and builds odbatch with Ninja. Usage: tools/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build"}
shift || true
cmake -S "$root" -B "$build_dir" -G Ninja -DODBATCH_WERROR=ON "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
