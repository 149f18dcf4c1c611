#!/usr/bin/env bash
# Builds and runs lowbit's main job, the rounding-mode benchmark
# (examples/rounding_benchmark.cpp).
# Arguments are passed on to the example; it runs in the caller's directory,
# so relative paths (--input FILE.npy, --plot FILE.svg) are the caller's.
set -euo pipefail
here=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

./scripts/setup.sh >&2

log=$(mktemp "${TMPDIR:-/tmp}/lowbit-main.XXXXXX")
trap 'rm -f "$log"' EXIT
if ! { cmake --preset default && cmake --build --preset default --target lowbit-example-rounding_benchmark; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "main: build failed" >&2
  exit 1
fi
rm -f "$log"

cd "$here"
exec "$root/build/examples/lowbit-example-rounding_benchmark" "$@"
