#!/usr/bin/env bash
# Builds lowbit with the default preset (g++, Release, -march=native) and runs
# every test, the exhaustive sweeps included. Extra arguments go to ctest
# (e.g. ./scripts/test.sh -R conformance).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/setup.sh
cmake --preset default
cmake --build --preset default
ctest --preset all --output-on-failure -j2 "$@"
