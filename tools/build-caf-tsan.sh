#!/usr/bin/env bash
# Builds CAF with -fsanitize=thread from Debian's source of the libcaf-dev installed here and
# installs libcaf_core, libcaf_io and their headers into PREFIX, for tools/tsan.sh.
# Usage: tools/build-caf-tsan.sh PREFIX
# Why: Debian's libcaf is not instrumented, so ThreadSanitizer cannot see the synchronisation inside
# it and reports every message passed between actors as a data race.
# Skips everything when PREFIX already holds this build (a stamp names the version). The source
# comes through apt-get source; when no deb-src entry serves it, one is added in
# /etc/apt/sources.list.d/odbatch-src.list and only its index is fetched (as root, or through sudo).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
jobs=2   # CI machines have 2 cores; the build also runs under nice

version=$(dpkg-query -W -f='${source:Version}' libcaf-dev 2>/dev/null) ||
  { echo "build-caf-tsan: libcaf-dev is not installed (run tools/install-deps.sh)" >&2; exit 1; }
stamp="$prefix/.odbatch-caf-tsan"
if [ "$(cat "$stamp" 2>/dev/null)" = "$version" ] &&
  readelf -d "$prefix/lib/libcaf_core.so" 2>/dev/null | grep 'NEEDED.*libtsan' >/dev/null; then
  echo "build-caf-tsan: CAF $version with TSan already in $prefix"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "build-caf-tsan: run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v dpkg-source >/dev/null; then
  $sudo apt-get install -y -qq --no-install-recommends dpkg-dev
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/caf-tsan.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

apt_source=(apt-get source --download-only "actor-framework=$version")
# As root, apt would warn that its _apt sandbox user cannot write to this private directory.
[ -n "$sudo" ] || apt_source+=(-o APT::Sandbox::User=root)
"${apt_source[@]}" >apt-source.log 2>&1 || true
if ! compgen -G 'actor-framework_*.dsc' >/dev/null; then
  # No deb-src serves it yet: add one for the mirror and suite libcaf-dev was installed from, and
  # fetch that entry's index alone (the other lists are left as they are).
  read -r uri suite < <(apt-cache policy libcaf-dev |
    awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[a-z]+:\/\// { split($3, s, "/"); print $2, s[1]; exit }') || true
  uri=${uri:-http://deb.debian.org/debian}
  suite=${suite:-bookworm}
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  options=""
  [ -f "$keyring" ] && options="[signed-by=$keyring] "
  list=/etc/apt/sources.list.d/odbatch-src.list
  echo "build-caf-tsan: adding 'deb-src $options$uri $suite main' in $list"
  echo "deb-src $options$uri $suite main" | $sudo tee "$list" >/dev/null
  $sudo apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0
  "${apt_source[@]}" >apt-source.log 2>&1 || true
fi
dsc=$(compgen -G 'actor-framework_*.dsc' | head -n 1) ||
  { cat apt-source.log >&2; echo "build-caf-tsan: apt-get source failed" >&2; exit 1; }
if grep -q '^E:' apt-source.log; then
  # Some mirrors lack the Debian packaging tarball (debian/ with its patches: build fixes for
  # newer compilers, a backport of upstream PR 1135). Upstream's tarball, checked against the
  # .dsc, builds too with the fixes below.
  grep '^E:' apt-source.log >&2
  orig=$(compgen -G 'actor-framework_*.orig.tar.*' | head -n 1) ||
    { echo "build-caf-tsan: apt-get source failed" >&2; exit 1; }
  awk -v f="$orig" '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 }
    on && $3 == f { print $1 "  " $3 }' "$dsc" | sha256sum --check --strict --quiet
  echo "build-caf-tsan: warning: building upstream $orig without Debian's patches" >&2
  mkdir src
  tar -xf "$orig" -C src --strip-components=1
else
  dpkg-source -x "$dsc" src >/dev/null
fi

# CAF 0.17.6 uses std::numeric_limits there without including <limits>, which g++ 12's headers
# no longer include transitively.
header=src/libcaf_io/caf/io/network/receive_buffer.hpp
grep -q '#include <limits>' "$header" || sed -i '0,/^#include </s//#include <limits>\n&/' "$header"

# C++14 as Debian builds it (upstream defaults to C++11). RelWithDebInfo keeps TSan's reports
# readable; NO_MEM_MANAGEMENT makes CAF allocate with plain new/delete instead of recycling blocks
# in its own caches, so TSan sees each object's allocation and release.
nice -n 10 cmake -S src -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS=-std=c++14 -fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_OPENCL=yes \
  -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes -DCAF_NO_MEM_MANAGEMENT=yes \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
nice -n 10 cmake --build build --parallel "$jobs"
cmake --install build >/dev/null
readelf -d "$prefix/lib/libcaf_core.so" | grep 'NEEDED.*libtsan' >/dev/null ||
  { echo "build-caf-tsan: $prefix/lib/libcaf_core.so is not instrumented" >&2; exit 1; }
echo "$version" >"$stamp"
echo "build-caf-tsan: CAF $version with TSan installed in $prefix"
