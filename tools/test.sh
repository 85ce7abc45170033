#!/usr/bin/env bash
# Installs the dependencies, builds and runs the whole test suite.
# Usage: tools/test.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build"}
shift || true
"$root/tools/install-deps.sh"
# Line tables (-g1) are all a failing test's backtrace needs, and compile a third faster than
# full debug information.
"$root/tools/build.sh" "$build_dir" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@"
# The pipeline's end-to-end tests read the real dataset.
"$root/tools/prepare-data.sh"
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" --timeout 600
