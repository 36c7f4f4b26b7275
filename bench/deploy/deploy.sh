#!/bin/sh
# Deploy figures (docs/PERF.md, "Deploy"): the real rocBLAS 5.5.1 from Debian
# trixie (librocblas.so.0.1, 450 MB, and its full 22-file Tensile library,
# 1.8 GB: tests/fixtures/make-trees.sh --full) deployed from the content-addressed
# store into a sandbox SDK tree that holds trixie's own rocBLAS (binary + a
# 4-file library: the originals, backed up by the first deploy), by
# bench-deploy; then ROUNDS rounds alternating `cp -a` + `sync` + `sha256sum`
# of the package against a redeploy over the deployed package. Everything is
# written under one sandbox folder on the file system of /tmp, removed at the
# end. Needs about 5x the package (12 GB) free.
#
# Usage: bench/deploy/deploy.sh [BUILD-DIR] [ROUNDS]   (defaults: build, 3)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" && pwd)
ROUNDS=${2:-3}
T=$HERE/../../tests/fixtures/make-trees.sh
CACHE=$("$T" --full | tail -1)
TREES=$CACHE/trees
FULL=$TREES/trixie-lib-full
L=$TREES/trixie/usr/lib/x86_64-linux-gnu
[ -f "$FULL/TensileLibrary.dat" ] && [ -f "$L/librocblas.so.0.1" ] || {
	echo "skip: the full rocBLAS 5.5.1 tree is not in $CACHE"
	exit 77
}
DIR=$(mktemp -d /tmp/rocmd-bench-deploy-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
echo "disk before: $(df -h --output=avail "$DIR" | tail -1) free on $(df --output=target "$DIR" | tail -1)"

# The package folder (what an import would have read) and the sandbox SDK.
mkdir -p "$DIR/pkg/library" "$DIR/state" "$DIR/store"
cp -a "$FULL/." "$DIR/pkg/library/"
cp -a "$L/librocblas.so.0.1" "$DIR/pkg/binary"
SDK=$DIR/sdk/usr/lib/x86_64-linux-gnu
mkdir -p "$SDK/rocblas/2.47.0"
cp -a "$L/librocblas.so.0.1" "$L/librocblas.so.0" "$SDK/"
cp -a "$L/rocblas/2.47.0/library" "$SDK/rocblas/2.47.0/library"
echo "package: $(ls "$DIR/pkg/library" | wc -l) library files + binary, $(du -sh "$DIR/pkg" | cut -f1);" \
	"originals: $(du -sh "$SDK" | cut -f1)"
# Warm the source for both contenders.
cat "$DIR/pkg/library/"* "$DIR/pkg/binary" >/dev/null
echo "kernel $(uname -r), $(nproc) cores, $(stat -f -c %T "$DIR") on /tmp, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bench/bench-deploy" "$DIR/state" "$DIR/store" "$DIR/pkg" \
	"$SDK/rocblas/2.47.0/library" "$SDK/librocblas.so.0" "$ROUNDS"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
