#!/usr/bin/env bash
# Builds lowbit with the default preset (g++, Release, -march=native) and runs
# every test but the exhaustive 2^32 sweeps: unit, conformance, examples,
# README, packaging, dispatch and determinism (./scripts/exhaustive.sh runs
# the sweeps). Extra arguments go to ctest (e.g. ./scripts/test.sh -R conformance).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/setup.sh
cmake --preset default
cmake --build --preset default
ctest --preset default --output-on-failure "$@"
