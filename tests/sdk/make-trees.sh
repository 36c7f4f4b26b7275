#!/bin/sh
# Builds the real SDK trees the SDK tests copy from, once, into the cache
# folder outside the repository (see fetch-debs.sh):
#   $CACHE/trees/bookworm   HIP 5.2.3 as Debian installs it under /usr (no rocBLAS:
#                           bookworm has none)
#   $CACHE/trees/trixie     HIP 5.7.1 and rocBLAS 5.5.1 under /usr; the library
#                           folder holds only the subset the tests need (the
#                           TensileLibrary.dat index, the gfx803 and gfx1030 code
#                           objects): the whole folder is 2.2 GB
#   $CACHE/trees/trixie-lib-full   (only with --full) every file of the library
#                           folder, for bench/sdk.sh
# Trees are built beside their final name and renamed when complete, so an
# interrupted run leaves nothing half-made. Prints the cache folder; exits 77
# with the reason when the packages cannot be had.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=$("$HERE/fetch-debs.sh" | tail -1)
TREES=$CACHE/trees
mkdir -p "$TREES"
exec 8>"$TREES/.lock"
command -v flock >/dev/null && flock 8

build() { # NAME SUITE [PATTERNS...]: extract SUITE's packages; librocblas0 only PATTERNS
	name=$1
	suite=$2
	shift 2
	[ -d "$TREES/$name" ] && return 0
	tmp=$TREES/.$name.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	for deb in "$CACHE/$suite"/*.deb; do
		case "$deb" in
		*/librocblas0_*)
			[ $# -gt 0 ] || continue
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards "$@"
			;;
		*) dpkg -x "$deb" "$tmp" ;;
		esac
	done
	mv "$tmp" "$TREES/$name"
}

LIB=./usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
build bookworm bookworm
build trixie trixie ./usr/lib/x86_64-linux-gnu/librocblas.so.0 \
	./usr/lib/x86_64-linux-gnu/librocblas.so.0.1 \
	"$LIB/TensileLibrary.dat" "$LIB/TensileLibrary_gfx803.co" \
	"$LIB/Kernels.so-000-gfx803.hsaco" "$LIB/Kernels.so-000-gfx1030.hsaco"
if [ "${1:-}" = "--full" ] && [ ! -d "$TREES/trixie-lib-full" ]; then
	tmp=$TREES/.trixie-lib-full.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$CACHE/trixie"/librocblas0_*.deb | tar -x -C "$tmp" --wildcards "$LIB/*"
	mv "$tmp/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library" "$TREES/trixie-lib-full"
	rm -rf "$tmp"
fi
echo "$CACHE"
