#!/bin/sh
# Installs the reference tokenizers (npm packages, into the build tree) and runs
# tokenizer_oracles.js to write their answers for the oracle tests. Skips both when the answers
# are newer than their inputs (this script, the node script, the dataset).
# Usage: tokenizer_oracles.sh SOURCE_DIR OUT_DIR
set -eu
source_dir=$1
out_dir=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../support/npm_oracle.sh"
# The versions the answers come from: tokenizers 0.23.2 bundles its linux-x64 native binding
# (0.13.3 needs a platform package that is not published); js-tiktoken ships the real ranks.
packages="tokenizers@0.23.2 js-tiktoken@1.0.21"

stamp="$out_dir/oracles.stamp"
inputs=$(cat "$here/tokenizer_oracles.sh" "$here/tokenizer_oracles.js" "$source_dir"/data/sft/*.jsonl |
  sha256sum | cut -d' ' -f1)
if oracle_is_current "$stamp" "$inputs $packages"; then
  echo "tokenizer oracles: up to date in $out_dir"
  exit 0
fi
npm_install_oracle "tokenizer oracles" "$out_dir" "$stamp" $packages
node "$here/tokenizer_oracles.js" "$out_dir/npm" "$source_dir" "$out_dir"
rm -f "$out_dir/train.txt"
echo "$inputs $packages" > "$stamp"
