#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# build-deb.sh -- build the Debian packages from a copy of the tree, so the
# source tree stays clean, and check them with lintian
#
# Usage: packaging/build-deb.sh [OUTDIR]
#   OUTDIR   where the .deb, .buildinfo and .changes files go (default
#            build/deb); the lintian report is OUTDIR/lintian.txt
# Environment: DEB_BUILD_OPTIONS is passed on (e.g. nocheck);
#   LINTIAN=0 skips lintian. Exit status: dpkg-buildpackage's, else
#   lintian's (1 when it reports an error or a warning).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
version=$(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# the tree as it is now (committed or not), without build output or git
src=$tmp/rpmem-$version
mkdir -p "$src"
tar -C "$top" --exclude=./build --exclude=./.git --exclude=./debian \
	-cf - . | tar -C "$src" -xf -
cp -R "$top/packaging/debian" "$src/debian"

(cd "$src" && dpkg-buildpackage -us -uc -b)

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
cp "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$out"/
ls -1 "$out"/*.deb
[ "${LINTIAN:-1}" != 0 ] || exit 0
changes=$(ls "$out"/*.changes)
# --fail-on warning: a warning fails the build like an error
lintian --fail-on error,warning --display-info --pedantic "$changes" \
	>"$out/lintian.txt" 2>&1 && ret=0 || ret=$?
cat "$out/lintian.txt"
echo "lintian: exit $ret (report in $out/lintian.txt)"
exit $ret
