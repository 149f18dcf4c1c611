#!/usr/bin/env bash
# Download one Debian package from another suite and unpack it into a folder,
# without touching the system's apt configuration.
#
#   scripts/fetch-deb.sh SUITE PACKAGE DEST
#   e.g. scripts/fetch-deb.sh trixie libxsimd-dev .deps/xsimd13
#        scripts/fetch-deb.sh bookworm-backports libcatch2-dev .deps/catch2v3
#
# The archive address and its keyring are read from the system's own apt
# sources at run time (the non-security Debian entry). apt runs with a private
# sources list, lists, cache and status file (in DEST/../.apt-SUITE), so the
# system's apt sources, package lists and installed packages are left as they were.
# A second run with the same arguments does nothing (stamp DEST/.fetch-deb-PACKAGE).
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 SUITE PACKAGE DEST" >&2
  exit 2
fi
suite=$1 pkg=$2 dest=$3
stamp="$dest/.fetch-deb-$pkg"

if [[ -f "$stamp" ]] && grep -qx "suite=$suite" "$stamp"; then
  echo "fetch-deb: $pkg from $suite already in $dest ($(grep '^version=' "$stamp" | cut -d= -f2))"
  exit 0
fi

for tool in apt-get dpkg-deb awk; do
  command -v "$tool" >/dev/null || { echo "fetch-deb: $tool not found" >&2; exit 1; }
done

# --- find the Debian archive URI and keyring in the system's sources -------
# Prints "URI KEYRING" for the first non-security Debian entry.
find_source() {
  local f
  # deb822 files: stanzas separated by blank lines.
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$f" ]] || continue
    awk '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && uris != "" && suites != "" && suites !~ /-security/ && uris !~ /security/) {
          split(uris, u, " "); print u[1], signed; found = 1; exit
        }
        types = uris = suites = signed = ""
      }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      tolower($1) == "types:"     { $1 = ""; types = $0 }
      tolower($1) == "uris:"      { $1 = ""; sub(/^ +/, ""); uris = $0 }
      tolower($1) == "suites:"    { $1 = ""; suites = $0 }
      tolower($1) == "signed-by:" { signed = $2 }
      END { if (!found) flush() }
    ' "$f" | head -n1 | grep . && return 0
  done
  # One-line style: deb [options] URI SUITE COMPONENTS...
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r "$f" ]] || continue
    awk '
      $1 != "deb" { next }
      {
        signed = ""; i = 2
        if ($2 ~ /^\[/) {
          while (i <= NF) {
            if ($i ~ /signed-by=/) { s = $i; sub(/.*signed-by=/, "", s); sub(/\]$/, "", s); signed = s }
            if ($i ~ /\]$/) { i++; break }
            i++
          }
        }
        uri = $i; st = $(i + 1)
        if (st ~ /-security/ || uri ~ /security/) next
        print uri, signed; exit
      }
    ' "$f" | head -n1 | grep . && return 0
  done
  return 1
}

if ! read -r uri keyring < <(find_source); then
  echo "fetch-deb: no Debian archive entry found in the system's apt sources" >&2
  exit 1
fi
if [[ -z "${keyring:-}" || ! -r "$keyring" ]]; then
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
fi
[[ -r "$keyring" ]] || { echo "fetch-deb: keyring $keyring not readable" >&2; exit 1; }

# --- private apt configuration --------------------------------------------
# apt's lists and cache for SUITE live beside DEST (DEST/../.apt-SUITE), so a
# second package from the same suite needs no fresh download of the lists.
state="$(dirname "$dest")/.apt-$suite"
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/prefs.d"
state=$(cd "$state" && pwd)
: > "$state/status"
cat > "$state/sources.list" <<SRC
deb [signed-by=$keyring] $uri $suite main
SRC
work=$(mktemp -d "${TMPDIR:-/tmp}/fetch-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/dl"

apt_opts=(
  -o "Dir::Etc::sourcelist=$state/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::Etc::preferences=$state/preferences"
  -o "Dir::Etc::preferencesparts=$state/prefs.d"
  -o "Dir::State::Lists=$state/lists"
  -o "Dir::State::status=$state/status"
  -o "Dir::Cache=$state/cache"
  -o "Acquire::Languages=none"
  -o "APT::Get::List-Cleanup=0"
)
if [[ $(id -u) -eq 0 ]]; then
  # The private folders belong to root; let apt fetch as root instead of _apt.
  apt_opts+=(-o "APT::Sandbox::User=root")
fi

echo "fetch-deb: $pkg from $suite ($uri)"
apt-get "${apt_opts[@]}" -qq update
version=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$pkg/$suite" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
if [[ -z "$version" ]]; then
  echo "fetch-deb: package $pkg not found in $suite" >&2
  exit 1
fi
(cd "$work/dl" && apt-get "${apt_opts[@]}" -qq download "$pkg/$suite")

debs=("$work"/dl/*.deb)
[[ -f "${debs[0]}" ]] || { echo "fetch-deb: download of $pkg failed" >&2; exit 1; }
payload=$(dpkg-deb -c "${debs[0]}" | awk '$NF !~ /\/$/ && $NF !~ /^\.\/usr\/share\/doc\// { n++ } END { print n + 0 }')
if [[ $payload -eq 0 ]]; then
  # e.g. catch2 in bookworm-backports, which only depends on libcatch2-dev.
  echo "fetch-deb: $pkg $version holds only documentation (a transitional package?);" \
       "it depends on: $(dpkg-deb -f "${debs[0]}" Depends)" >&2
  exit 1
fi
mkdir -p "$dest"
dpkg-deb -x "${debs[0]}" "$dest"
printf 'suite=%s\npackage=%s\nversion=%s\nfile=%s\n' "$suite" "$pkg" "$version" "$(basename "${debs[0]}")" > "$stamp"
echo "fetch-deb: unpacked $(basename "${debs[0]}") into $dest"
