#!/usr/bin/env bash
# Fetches what the xsimd13 preset builds against into .deps/ (no system change):
#   .deps/xsimd13   xsimd 13 from Debian 13 (trixie), plus the xtl it requires
#                   (Debian builds it with XSIMD_ENABLE_XTL_COMPLEX)
#   .deps/catch2v3  Catch2 v3 from bookworm-backports (libcatch2-dev; the
#                   package named catch2 there is only a transitional one)
# Then: cmake --workflow --preset xsimd13
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/fetch-deb.sh trixie libxsimd-dev .deps/xsimd13
./scripts/fetch-deb.sh trixie xtl-dev .deps/xsimd13
./scripts/fetch-deb.sh bookworm-backports libcatch2-dev .deps/catch2v3
