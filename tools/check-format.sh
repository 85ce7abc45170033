#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format's output (.clang-format at the root).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
[ ${#files[@]} -gt 0 ] || exit 0
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
# doctest_discover_tests registers a case named with ';' under the text before it, which matches no
# case: ctest would run nothing and report a pass.
if git grep -n -E 'TEST_CASE\("[^"]*;' -- 'tests/*.cpp'; then
  echo "check-format: test case names above contain ';', which CTest's discovery cuts" >&2
  exit 1
fi
