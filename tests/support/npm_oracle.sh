# Shared steps of the CTest fixtures that run reference implementations installed from npm into
# the build tree. Sourced by POSIX sh scripts.

# Whether STAMP holds KEY: the answers were written from the same inputs and packages.
oracle_is_current() {
  [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# npm_install_oracle WHAT OUT_DIR STAMP PACKAGE...: fails naming WHAT without node or npm, drops
# the stale STAMP, and installs the packages under OUT_DIR/npm.
npm_install_oracle() {
  what=$1
  dir=$2
  stale=$3
  shift 3
  for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "$what: '$tool' not found; it needs Node.js and npm (Debian: apt-get install nodejs" \
        "npm) and access to the npm registry" >&2
      exit 1
    fi
  done
  mkdir -p "$dir"
  rm -f "$stale"
  npm install --prefix "$dir/npm" --no-audit --no-fund --no-save "$@"
}
