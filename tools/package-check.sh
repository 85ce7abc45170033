#!/usr/bin/env bash
# Checks odbatch as its users get it: installs a build to a prefix, builds the C++ trainer example
# out of tree against it with find_package(odbatch) and with pkg-config, runs it on the real
# dataset, then pip-installs the Python package into a virtual environment (system site packages:
# Debian's numpy and torch) and runs the binding's tests against the installed package.
# Usage: tools/package-check.sh [BUILD_DIR]     (a configured and built tree; default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "${1:-"$root/build"}" && pwd)
work=$(mktemp -d /tmp/odbatch-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "package-check: install to $prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null

echo "package-check: every installed header compiles, and includes no dependency's headers"
(cd "$prefix/include" && find odbatch -name '*.hpp' | sort | sed 's/.*/#include "&"/') \
  > "$work/all_headers.cpp"
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -fsyntax-only -MD -MF "$work/all_headers.d" -Wall -Wextra -Werror $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags odbatch) \
  "$work/all_headers.cpp"
if grep -E -o '/usr/include/(caf|boost|gloo|nlohmann|toml\+\+|CLI|sentencepiece|turbojpeg|jpeglib)[^ ]*' \
  "$work/all_headers.d" | sort -u | grep .; then
  echo "package-check: FAIL: the public headers include the dependencies' headers above" >&2
  exit 1
fi

echo "package-check: the C++ trainer against the installed package (find_package)"
cmake -S "$root/examples/cpp_trainer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/consumer" >/dev/null

echo "package-check: the C++ trainer against the installed package (pkg-config)"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -O1 -Wall -Wextra -Werror -o "$work/trainer-pkgconfig" "$root"/examples/cpp_trainer/*.cpp \
  $(pkg-config --cflags --libs odbatch) -Wl,-rpath,"$prefix/lib"

mkdir -p "$work/data"
head -n 120 "$root/data/sft/mixed.jsonl" | grep -v '"image' > "$work/data/records.jsonl"
cat > "$work/data/pipeline.toml" <<TOML
[source]
files = ["records.jsonl"]
[tokenizer]
model = "$root/data/tokenizer/odbatch-unigram-8k.model"
[batching]
token_budget = 2048
max_seq_len = 2048
window = 32
TOML
for trainer in "$work/consumer/odbatch_cpp_trainer" "$work/trainer-pkgconfig"; do
  "$trainer" "$work/data/pipeline.toml" --log-every 5 --max-steps 10 | tail -n 2
done

echo "package-check: pip install into a virtual environment"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
(cd "$root" && ODBATCH_BUILD_DIR=$build_dir "$work/venv/bin/pip" install --no-build-isolation \
  --no-index --quiet .)
# From the tests' directory: `import odbatch` finds the installed package, not the build tree's.
(cd "$root/tests/python" && env -u PYTHONPATH ODBATCH_DATA_DIR="$root/data" \
  ODBATCH_BATCH_DUMP="$build_dir/tests/python/odbatch_batch_dump" ODBATCH_CLI="$build_dir/odbatch" \
  "$work/venv/bin/python" -c 'import odbatch, sys; print("package-check: imported", odbatch.__file__); sys.exit("site-packages" not in odbatch.__file__)' &&
  env -u PYTHONPATH ODBATCH_DATA_DIR="$root/data" \
  ODBATCH_BATCH_DUMP="$build_dir/tests/python/odbatch_batch_dump" ODBATCH_CLI="$build_dir/odbatch" \
  "$work/venv/bin/python" -m unittest test_pipeline test_torch_training)
echo "package-check: PASS"
