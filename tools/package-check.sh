#!/usr/bin/env bash
# Checks odbatch as its users get it: installs a build to a prefix; checks that the installed
# headers are exactly the facade a trainer includes (odbatch/*.hpp) and the headers it includes,
# that they compile and include no dependency's headers, and that the package without its cuda
# component needs no CUDA; builds the C++ trainer example out of tree against it with
# find_package(odbatch) and with pkg-config and runs it on the real dataset (from a build with
# CUDA, the CUDA trainer too, through the component cuda and odbatch-cuda.pc); builds the example
# stage plugins out of tree and runs one, and checks that a plugin built against another odbatch
# version is refused naming both versions; then pip-installs
# the Python package into a virtual environment (system site packages: Debian's numpy and torch)
# and runs the binding's tests against the installed package.
# Usage: tools/package-check.sh [BUILD_DIR]     (a configured and built tree; default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "${1:-"$root/build"}" && pwd)
work=$(mktemp -d /tmp/odbatch-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() {
  echo "package-check: FAIL: $*" >&2
  exit 1
}

echo "package-check: install to $prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
with_cuda=false
header_package=odbatch
if [[ -f $prefix/lib/cmake/odbatch/odbatchCudaTargets.cmake ]]; then
  with_cuda=true
  header_package=odbatch-cuda
fi

echo "package-check: the examples include only the facade (odbatch/*.hpp)"
if grep -rnE '#include "odbatch/[^"]*/' "$root/examples"; then
  fail "the examples above include odbatch's internal headers, not the facade"
fi

echo "package-check: the installed headers are the facade and what it includes, no more"
(cd "$prefix/include" && find odbatch -maxdepth 1 -name '*.hpp' | sort | sed 's/.*/#include "&"/') \
  > "$work/facade.cpp"
# shellcheck disable=SC2046 # pkg-config's flags are words
# The prefix's include directory first, so that every header is named by one path.
g++ -M -MF "$work/facade.d" -I"$prefix/include" $(pkg-config --cflags "$header_package") \
  "$work/facade.cpp"
tr ' ' '\n' < "$work/facade.d" | sed -n "s|^$prefix/include/||p" | sort -u > "$work/closure"
(cd "$prefix/include" && find . -type f | sed 's|^\./||' | sort) > "$work/installed"
if ! diff "$work/closure" "$work/installed" > "$work/closure.diff"; then
  sed -n 's/^> /installed, though the facade does not include it: /p; s/^< /included, not installed: /p' \
    "$work/closure.diff" >&2
  fail "the installed headers are not the facade's closure"
fi
echo "package-check: $(wc -l < "$work/installed") headers installed"

echo "package-check: every installed header compiles, and includes no dependency's headers"
(cd "$prefix/include" && find odbatch -name '*.hpp' | sort | sed 's/.*/#include "&"/') \
  > "$work/all_headers.cpp"
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -fsyntax-only -MD -MF "$work/all_headers.d" -Wall -Wextra -Werror $(pkg-config --cflags "$header_package") \
  "$work/all_headers.cpp"
if grep -E -o '/usr/include/(caf|boost|gloo|nlohmann|toml\+\+|CLI|sentencepiece|turbojpeg|jpeglib)[^ ]*' \
  "$work/all_headers.d" | sort -u | grep .; then
  fail "the public headers include the dependencies' headers above"
fi

echo "package-check: odbatch without its cuda component needs no CUDA"
if readelf -d "$prefix/lib/libodbatch.so" | grep -E 'NEEDED.*(cuda|nccl)'; then
  fail "libodbatch.so links CUDA's libraries above"
fi
if pkg-config --cflags --libs odbatch | grep -E -i 'cuda|nccl'; then
  fail "odbatch.pc carries CUDA's flags"
fi

echo "package-check: the C++ trainer against the installed package (find_package, CUDA not findable)"
cmake -S "$root/examples/cpp_trainer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON --no-warn-unused-cli \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/consumer" >/dev/null

echo "package-check: the C++ trainer against the installed package (pkg-config)"
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

echo "package-check: the example stage plugins against the installed package (find_package)"
cmake -S "$root/examples/stages" -B "$work/stages" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/stages" >/dev/null
stage_config() {  # the trainers' pipeline file with the quality filter of plugin $1
  cat "$work/data/pipeline.toml"
  cat <<TOML
[[stage]]
name = "quality"
kind = "sample"
type = "quality_filter"
plugin = "$1"
[stage.params]
min_tokens = 16
TOML
}
stage_config "$work/stages/libodbatch_quality_filter.so" > "$work/data/stages.toml"
"$prefix/bin/odbatch" run "$work/data/stages.toml" --json "$work/stages.json" >/dev/null 2>&1 ||
  fail "odbatch run with the quality filter plugin failed"
rejected=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rejected_by_reason"].get("quality:too_short", 0))' "$work/stages.json")
[[ $rejected -gt 0 ]] || fail "the quality filter plugin rejected nothing"
echo "package-check: the quality filter plugin rejected $rejected samples as quality:too_short"

echo "package-check: a plugin built against another odbatch version is refused, naming both"
cp -r "$prefix/include" "$work/other-include"
sed -i 's/kHeaderVersion = "[^"]*"/kHeaderVersion = "9.9.9"/' "$work/other-include/odbatch/version.hpp"
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -std=c++20 -shared -fPIC -o "$work/libother_version.so" -I"$work/other-include" \
  "$root/examples/stages/quality_filter.cpp" $(pkg-config --libs odbatch) -Wl,-rpath,"$prefix/lib"
stage_config "$work/libother_version.so" > "$work/data/other-version.toml"
if "$prefix/bin/odbatch" run "$work/data/other-version.toml" > "$work/other-version.out" 2>&1; then
  fail "a plugin built for odbatch 9.9.9 was loaded"
fi
version=$(pkg-config --modversion odbatch)
grep -q "built for odbatch 9.9.9, this is odbatch $version" "$work/other-version.out" ||
  fail "the refusal does not name both versions: $(cat "$work/other-version.out")"

if $with_cuda; then
  echo "package-check: the CUDA trainer against the installed package (find_package COMPONENTS cuda)"
  nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
  cmake -S "$root/examples/cuda_trainer" -B "$work/cuda-consumer" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
  cmake --build "$work/cuda-consumer" >/dev/null

  echo "package-check: the CUDA trainer against the installed package (pkg-config odbatch-cuda)"
  "$nvcc" -c -o "$work/cuda_trainer_kernels.o" "$root/examples/cuda_trainer/cuda_trainer_kernels.cu"
  # shellcheck disable=SC2046 # pkg-config's flags are words
  g++ -O1 -Wall -Wextra -Werror -o "$work/cuda-trainer-pkgconfig" \
    "$root/examples/cuda_trainer/cuda_trainer.cpp" "$work/cuda_trainer_kernels.o" \
    $(pkg-config --cflags --libs odbatch-cuda) -lcublas -Wl,-rpath,"$prefix/lib"

  # Without a GPU they exit 77, having run nothing.
  for trainer in "$work/cuda-consumer/odbatch_cuda_trainer" "$work/cuda-trainer-pkgconfig"; do
    status=0
    "$trainer" "$work/data/pipeline.toml" --max-steps 10 --print-every 5 || status=$?
    [[ $status == 0 || $status == 77 ]] || fail "$trainer exited $status"
  done
fi

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
