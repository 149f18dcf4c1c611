#!/usr/bin/env bash
# Builds the exhaustive sweeps (tests/exhaustive, target lowbit-exhaustive,
# -O3) in the default preset's build and runs them: every operator's SIMD
# path against its scalar path, and the rounding identities, on all 2^32
# float32 inputs, on two threads. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/setup.sh
cmake --preset default
cmake --build --preset default --target lowbit-exhaustive
ctest --preset exhaustive --output-on-failure "$@"
