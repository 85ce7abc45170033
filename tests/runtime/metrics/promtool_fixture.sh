#!/bin/sh
# Puts Prometheus's promtool at $1/promtool for the metrics tests, without installing the service:
# the system's own when present, else the binary taken out of Debian's prometheus package.
set -eu
dir=$1
mkdir -p "$dir"
if [ -x "$dir/promtool" ]; then exit 0; fi
if [ -x /usr/bin/promtool ]; then
  ln -sf /usr/bin/promtool "$dir/promtool"
  exit 0
fi
cd "$dir"
rm -f prometheus_*.deb
apt-get download prometheus
dpkg -x prometheus_*.deb extracted
ln -sf "$dir/extracted/usr/bin/promtool" "$dir/promtool"
"$dir/promtool" --version
