#!/usr/bin/env bash
# lowbit on aarch64 (NEON through xsimd): installs, with apt-get, the cross
# toolchain and qemu user-mode emulation if missing (plus what
# scripts/setup.sh installs), then cross-compiles with the CMake preset
# `aarch64` (cmake/toolchains/aarch64-linux-gnu.cmake, build-aarch64/) and
# runs the unit tests and every conformance vector, in both semantics, under
# qemu-aarch64; then the determinism ctest compares the aarch64 digests of its
# corpus with the x86-64 ones. Extra arguments go to cmake --workflow (only --fresh: a
# workflow takes no ctest arguments; for those, run
# `ctest --preset aarch64 -R ...` after this script).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/setup.sh

packages=(
  g++-aarch64-linux-gnu   # the aarch64 cross compiler (g++ 12.2 on Debian 12) and C library
  qemu-user               # qemu-aarch64 (7.2 on Debian 12): runs the tests
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "aarch64: all ${#packages[@]} packages present"
else
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "aarch64: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "aarch64: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "aarch64: done"
fi

cmake --workflow --preset aarch64 "$@"

# The determinism ctest of the default (x86-64) build, which now finds the
# cross compiler and qemu: its fixed corpus through the SSE2, AVX2, native
# and aarch64 builds, every digest identical. It builds what it needs.
said=$(cmake --preset default)
if ! grep -q "determinism test compares aarch64 too" <<<"$said"; then
  echo "aarch64: the default build's determinism test would not compare aarch64:" >&2
  grep "determinism" <<<"$said" >&2 || true
  exit 1
fi
ctest --preset default -R '^determinism$' --output-on-failure
