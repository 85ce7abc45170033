#!/usr/bin/env bash
# Installs odbatch's build and test dependencies from Debian's packages (Debian 12).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkgconf ccache
  libcaf-dev libboost-dev libgloo-dev
  libturbojpeg0-dev libjpeg62-turbo-dev
  libsentencepiece-dev sentencepiece
  doctest-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  spin clang-format
  clang-14 libclang-rt-14-dev llvm-14 mold
  python3-dev pybind11-dev python3-numpy python3-torch python3-venv python3-setuptools python3-wheel
  python3-pip python3-pil zlib1g-dev
  libpcre2-dev libutf8proc-dev
  jq gnuplot-nox
  iproute2
  python3-jinja2
  libpng-dev libwebp-dev
  libarchive-dev
  libcurl4-openssl-dev nginx-light openssl
  libgraphviz-dev
  python3-build patchelf
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
