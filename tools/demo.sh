#!/usr/bin/env bash
# Installs the dependencies, builds odbatch and plans the bundled uneven-shards epoch: a summary
# per round on the terminal, the full JSON report in out/uneven_shards.plan.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh" "$root/build" >/dev/null
mkdir -p "$root/out"
"$root/build/odbatch" plan --summary --output "$root/out/uneven_shards.plan.json" \
  "$root/examples/scenarios/uneven_shards.json"
echo "full report: $root/out/uneven_shards.plan.json"
