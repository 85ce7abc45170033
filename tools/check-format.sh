#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format's output (.clang-format at the root), or
# when a test case's name would be cut by CTest's discovery.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
[ ${#files[@]} -gt 0 ] || exit 0
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
# doctest_discover_tests splits a case's name at a ';' into entries that match no case: ctest would
# run nothing under them and report a pass.
if git grep -n -E 'TEST_CASE\("[^"]*;' -- 'tests/*.cpp'; then
  echo "check-format: test case names above contain ';', which CTest's discovery cuts" >&2
  exit 1
fi
