#!/usr/bin/env bash
# lowbit on aarch64 (NEON through xsimd): installs, with scripts/setup.sh, the
# cross toolchain and qemu user-mode emulation if missing (plus what the
# build needs), then cross-compiles with the CMake preset
# `aarch64` (cmake/toolchains/aarch64-linux-gnu.cmake, build-aarch64/) and
# runs the unit tests and every conformance vector, in both semantics, under
# qemu-aarch64; then the determinism ctest compares the aarch64 digests of its
# corpus with the x86-64 ones. Extra arguments go to cmake --workflow (only --fresh: a
# workflow takes no ctest arguments; for those, run
# `ctest --preset aarch64 -R ...` after this script).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The build's packages, the aarch64 cross compiler (g++ 12.2 on Debian 12)
# and C library, and qemu-aarch64 (qemu-user, 7.2 on Debian 12).
./scripts/setup.sh g++-aarch64-linux-gnu qemu-user

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
