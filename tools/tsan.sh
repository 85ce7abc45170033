#!/usr/bin/env bash
# Builds the concurrency tests (ctest label tsan) with ThreadSanitizer and runs them, against a
# CAF built with TSan too (tools/build-caf-tsan.sh, built once per CAF and compiler version and kept
# outside the clone, in ODBATCH_CACHE_DIR, by default ~/.cache/odbatch, so fresh clones reuse it).
# Usage: tools/tsan.sh [BUILD_DIR]     (BUILD_DIR defaults to <repo>/build-tsan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build-tsan"}
cache=${ODBATCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/odbatch}
jobs=2   # CI machines have 2 cores; builds also run under nice
# The test targets whose tests carry the label tsan (odbatch_test_suite's TSAN).
targets=(odbatch_actors_concurrency_tests odbatch_store_tests odbatch_control_plane_tests
  odbatch_source_http_tests odbatch_batch_tests)

"$root/tools/install-deps.sh"
caf_version=$(dpkg-query -W -f='${source:Version}' libcaf-dev)
caf=$cache/caf-tsan-$caf_version-gcc$(gcc -dumpfullversion)
"$root/tools/build-caf-tsan.sh" "$caf"
mkdir -p "$build_dir"
caf=$(cd "$caf" && pwd)
# The -U make FindCAF search again, so CMAKE_PREFIX_PATH wins even in a build dir configured
# before against Debian's (uninstrumented) libcaf.
# Line tables (-g1) are all TSan's reports need, and compile faster than full debug information.
cmake -S "$root" -B "$build_dir" -G Ninja -DODBATCH_WERROR=ON -DODBATCH_WITH_CUDA=OFF \
  -DODBATCH_SANITIZE=thread -DCMAKE_PREFIX_PATH="$caf" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -UCAF_INCLUDE_DIR -UCAF_CORE_LIBRARY -UCAF_IO_LIBRARY
for var in CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY; do
  value=$(sed -n "s/^$var:[A-Z]*=//p" "$build_dir/CMakeCache.txt")
  case "$value" in
    "$caf"/*) ;;
    *) echo "tsan: $var is '$value', not in $caf" >&2; exit 1 ;;
  esac
done
nice -n 10 cmake --build "$build_dir" --parallel "$jobs" --target "${targets[@]}"
# The pipeline tests read the real dataset.
"$root/tools/prepare-data.sh"

# Same soname as Debian's libcaf: check that the tests load the instrumented one (build RPATH).
mapfile -t binaries < <(ctest --test-dir "$build_dir" -N -V -L tsan |
  sed -n 's/^.*Test command: \([^ ]*\).*$/\1/p' | sort -u)
[ ${#binaries[@]} -gt 0 ] || { echo "tsan: no test labelled tsan in $build_dir" >&2; exit 1; }
# The actor tests must load it; tests of code without actors (the store) load no CAF at all.
# ldd's output is read whole before grep sees it: with pipefail, `ldd | grep -q` fails whenever
# grep exits on its match while ldd is still writing (SIGPIPE).
for binary in "${binaries[@]}"; do
  libraries=$(ldd "$binary")
  case "$binary" in
    */odbatch_actors_*)
      grep -q "^[[:space:]]*libcaf_core\.so.* => $caf/lib/" <<<"$libraries" ||
        { echo "tsan: $binary does not load libcaf_core from $caf/lib:" >&2
          echo "$libraries" >&2; exit 1; } ;;
  esac
  if grep '^[[:space:]]*libcaf_' <<<"$libraries" | grep -v " => $caf/lib/"; then
    echo "tsan: $binary loads a CAF library from outside $caf/lib" >&2
    exit 1
  fi
done

# halt_on_error: a test with a report fails at once, with the report in its output.
export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}"
ctest --test-dir "$build_dir" -L tsan --output-on-failure --no-tests=error --timeout 900
