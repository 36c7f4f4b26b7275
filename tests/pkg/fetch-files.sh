#!/bin/sh
# Extracts the real rocBLAS files the package store tests build their archives
# from: a few files of the library folder in Debian trixie's librocblas0
# (rocBLAS 5.5.1), plus librocblas.so.0.1 for the SONAME check. The .deb comes
# from tests/sdk/fetch-debs.sh (cached outside the repository); the files are
# extracted once into $ROCMD_TEST_DEBS/pkg-files/ and reused.
# Usage: fetch-files.sh [--big]   (--big also extracts the files the import
# benchmark uses: every TensileLibrary_*.co and Kernels.so-000-*.hsaco)
# Prints the folder; exits 77 (skip) when the package cannot be had.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${ROCMD_TEST_DEBS:-/var/cache/rocmd-test-debs}
OUT=$CACHE/pkg-files
LIB=usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
want="./$LIB/TensileLibrary_gfx803.co ./$LIB/Kernels.so-000-gfx803.hsaco
./$LIB/Kernels.so-000-gfx1030.hsaco ./usr/lib/x86_64-linux-gnu/librocblas.so.0.1"
[ "${1:-}" = "--big" ] && want="$want ./$LIB/*"
missing=0
for f in $want; do
	case "$f" in *\**) missing=1 ;; *) [ -e "$OUT/$f" ] || missing=1 ;; esac
done
if [ "$missing" -eq 0 ] || { [ "${1:-}" = "--big" ] && [ -e "$OUT/.big" ]; }; then
	echo "$OUT"
	exit 0
fi
deb=$(ls "$CACHE"/trixie/librocblas0_*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	ROCMD_TEST_SUITES=trixie sh "$HERE/../sdk/fetch-debs.sh" >/dev/null || exit 77
	deb=$(ls "$CACHE"/trixie/librocblas0_*.deb 2>/dev/null | head -n 1 || true)
	[ -n "$deb" ] || { echo "skip: no librocblas0 .deb" >&2; exit 77; }
fi
mkdir -p "$OUT.tmp"
# shellcheck disable=SC2086
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$OUT.tmp" --wildcards $want
mkdir -p "$OUT"
(cd "$OUT.tmp" && tar -cf - .) | (cd "$OUT" && tar -xf -)
rm -rf "$OUT.tmp"
[ "${1:-}" = "--big" ] && touch "$OUT/.big"
echo "$OUT"
