#!/bin/sh
# Runs chat_tokenization_oracle.js with the packages the tokenizer and chat template oracles
# installed (their fixtures run first) to write the expected ids and labels of chat tokenization
# through real Jinja templates. Skips it when the answers are newer than their inputs.
# Usage: chat_tokenization_oracle.sh SOURCE_DIR TOKENIZER_ORACLE_DIR TEMPLATE_ORACLE_DIR OUT_DIR
set -eu
source_dir=$1
tokenizer_dir=$2
template_dir=$3
out_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../support/npm_oracle.sh"

stamp="$out_dir/oracle.stamp"
inputs=$(cat "$here/chat_tokenization_oracle.sh" "$here/chat_tokenization_oracle.js" \
  "$here"/data/chat_templates/*.jinja "$here"/data/tool_use.jsonl "$source_dir"/data/sft/*.jsonl \
  "$tokenizer_dir"/qwen2.json "$tokenizer_dir"/llama3.json "$tokenizer_dir"/*.tiktoken | sha256sum | cut -d' ' -f1)
if oracle_is_current "$stamp" "$inputs"; then
  echo "chat tokenization oracle: up to date in $out_dir"
  exit 0
fi
mkdir -p "$out_dir"
rm -f "$stamp"
node "$here/chat_tokenization_oracle.js" "$source_dir" "$template_dir/npm/node_modules" \
  "$tokenizer_dir/npm/node_modules" "$tokenizer_dir" "$out_dir"
echo "$inputs" > "$stamp"
