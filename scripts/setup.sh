#!/usr/bin/env bash
# Installs, with apt-get, whatever lowbit's build and tests need that is not
# installed yet, and the Debian packages named as arguments (scripts/aarch64.sh
# adds its cross compiler and qemu). A second run only checks (dpkg-query)
# and prints one line.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  libxsimd-dev        # xsimd 8.1 on Debian 12 (the library's one dependency)
  catch2              # Catch2 2.13 on Debian 12 (tests)
  libbenchmark-dev    # Google Benchmark 1.7 (bench/)
  clang-14 libclang-rt-14-dev   # second compiler and its sanitizer runtimes
  "$@"                # what the caller adds
)

if ! command -v dpkg-query >/dev/null; then
  echo "setup: not a Debian-based system; install by hand: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
