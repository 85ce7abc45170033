#!/usr/bin/env bash
# Installs the dependencies, builds odbatch and plans the bundled uneven-shards epoch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh" "$root/build" >/dev/null
"$root/build/odbatch" plan "$root/examples/scenarios/uneven_shards.json"
