#!/bin/sh
# Installs @huggingface/jinja (the Jinja implementation of transformers.js) into the build tree
# and runs chat_template_oracle.js to render the real chat templates on the dataset's
# conversations, then chat_template_jinja2_oracle.py to render the same cases with Python's
# jinja2 (the engine transformers runs), for the chat template oracle test. Skips all of it when
# the answers are newer than their inputs (these scripts, the templates, the dataset).
# Usage: chat_template_oracle.sh SOURCE_DIR OUT_DIR PYTHON
set -eu
source_dir=$1
out_dir=$2
python=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../support/npm_oracle.sh"
package="@huggingface/jinja@0.5.13"

stamp="$out_dir/oracle.stamp"
inputs=$(cat "$here/chat_template_oracle.sh" "$here/chat_template_oracle.js" \
  "$here/chat_template_jinja2_oracle.py" \
  "$here"/data/chat_templates/*.jinja "$source_dir"/data/sft/*.jsonl | sha256sum | cut -d' ' -f1)
if oracle_is_current "$stamp" "$inputs $package"; then
  echo "chat template oracle: up to date in $out_dir"
  exit 0
fi
npm_install_oracle "chat template oracle" "$out_dir" "$stamp" "$package"
node "$here/chat_template_oracle.js" "$source_dir" "$out_dir/npm/node_modules" "$out_dir"
"$python" "$here/chat_template_jinja2_oracle.py" "$here/data/chat_templates" "$out_dir"
echo "$inputs $package" > "$stamp"
