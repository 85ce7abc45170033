#!/usr/bin/env bash
# Installs the dependencies, builds odbatch, makes the real multimodal dataset and runs one epoch
# of the pipeline in examples/pipeline.toml (a progress line, then a summary). Then plans the
# bundled uneven-shards scenario, to show how ranks with unequal data stay aligned, and trains the
# example C++ model on two ranks (examples/cpp_trainer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
# Only what it runs: the CLI and the example trainer, not the test suite.
ODBATCH_BUILD_TARGETS="odbatch odbatch_cpp_trainer" "$root/tools/build.sh" "$root/build" >/dev/null
"$root/tools/prepare-data.sh"
mkdir -p "$root/out"
"$root/build/odbatch" run "$root/examples/pipeline.toml" \
  --ledger "$root/out/pipeline.ledger.jsonl" --json "$root/out/pipeline.summary.json"
echo
"$root/build/odbatch" plan --summary --output "$root/out/uneven_shards.plan.json" \
  "$root/examples/scenarios/uneven_shards.json"
echo
echo "the example C++ trainer, two ranks, two epochs:"
"$root/build/odbatch" launch --nproc 2 -- "$root/build/examples/cpp_trainer/odbatch_cpp_trainer" \
  "$root/examples/pipeline.toml" --epochs 2 --log-every 50
echo "reports: $root/out/"
