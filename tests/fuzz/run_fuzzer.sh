#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (the ctest test fuzz.<target> of a build with
# ODBATCH_FUZZ). The corpus it grows stays in WORK/corpus for the next run; the seeds and the
# committed regression inputs are read too. A crash, a leak, an input over the time or memory
# limit fails the test, its input saved in WORK/crashes/.
# Usage: run_fuzzer.sh FUZZER SECONDS WORK SEEDS REGRESSIONS
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 seeds=$4 regressions=$5
name=$(basename "$fuzzer")
mkdir -p "$work/corpus" "$work/crashes"
rm -f "$work/fuzz-summary.txt"
inputs=("$work/corpus" "$seeds")
[ -d "$regressions" ] && inputs+=("$regressions")
log=$work/fuzz.log
# Stacks with function names and lines (Debian installs the symbolizer under a versioned name).
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
[ -n "${ASAN_SYMBOLIZER_PATH:-}" ] || [ -z "$symbolizer" ] || export ASAN_SYMBOLIZER_PATH=$symbolizer
status=0
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
  -artifact_prefix="$work/crashes/" "${inputs[@]}" >"$log" 2>&1 || status=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
# The last status line's "corp: UNITS/BYTES": the corpus libFuzzer holds at the end.
corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1 | sed 's/corp: //')
saved=$(find "$work/corpus" -type f | wc -l)
echo "$name: ${runs:-?} runs in $seconds s, corpus ${corpus:-?} ($saved inputs kept in $work/corpus)" |
  tee "$work/fuzz-summary.txt"
if [ "$status" -ne 0 ]; then
  tail -n 80 "$log"
  echo "$name: failed (exit $status); the input is in $work/crashes/:" >&2
  ls -l "$work/crashes/" >&2
  exit 1
fi
