#!/bin/sh
# Package store figures (docs/PERF.md, "Package store"):
#  1. import throughput of a >= 500 MB 7z (LZMA2, solid) of real rocBLAS
#     library files, through rocmd + rocmctl, against `7z x` + `sha256sum` of
#     the same archive in the same run (extraction and hashing: the work an
#     import cannot avoid; rocmd also fsyncs, moves into the store, parses
#     TensileLibrary.dat and records every file);
#  2. store deduplication when a second package shares files with the first.
# Usage: bench/pkg-import/pkg-import.sh ROCMD ROCMCTL   (run from anywhere; needs 7z)
# The real files come from tests/fixtures/fetch-files.sh --big (Debian trixie
# librocblas0, cached outside the repository).
set -eu
ROCMD=$(readlink -f "$1")
CTL=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
F=$HERE/../../tests/fixtures/fetch-files.sh
FILES=$(sh "$F" --big | tail -n 1)
LIB=$FILES/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
WORK=${ROCMD_BENCH_DIR:-/var/tmp/rocmd-bench-pkg}
rm -rf "$WORK"
mkdir -p "$WORK/a/library" "$WORK/b/library"
# Package A: one arch's worth of a real library folder (the single index plus
# gfx1030 and gfx1100 code objects). Package B shares the index and gfx1030.
for f in TensileLibrary.dat TensileLibrary_gfx1030.co TensileLibrary_gfx1100.co \
	Kernels.so-000-gfx1030.hsaco Kernels.so-000-gfx1100.hsaco; do
	ln "$LIB/$f" "$WORK/a/library/$f" 2>/dev/null || cp "$LIB/$f" "$WORK/a/library/$f"
done
for f in TensileLibrary.dat TensileLibrary_gfx1030.co Kernels.so-000-gfx1030.hsaco \
	TensileLibrary_gfx1101.co Kernels.so-000-gfx1101.hsaco; do
	ln "$LIB/$f" "$WORK/b/library/$f" 2>/dev/null || cp "$LIB/$f" "$WORK/b/library/$f"
done
A="$WORK/rocm.gfx1030.gfx1100.V5.0.for.hip.sdk.6.2.4.7z"
B="$WORK/rocm.gfx1030.gfx1101.V5.0.for.hip.sdk.6.2.4.7z"
A0="$WORK/stored/rocm.gfx1030.gfx1100.V5.0.for.hip.sdk.6.2.4.7z"
mkdir -p "$WORK/stored"
(cd "$WORK/a" && 7z a -bd -bso0 -m0=lzma2 -ms=on -mx=1 "$A" library)
(cd "$WORK/a" && 7z a -bd -bso0 -mx=0 "$A0" library)
(cd "$WORK/b" && 7z a -bd -bso0 -m0=lzma2 -ms=on -mx=1 "$B" library)
python3 "$HERE/pkg-import.py" "$ROCMD" "$CTL" "$WORK" "$A" "$A0" "$B"
rm -rf "$WORK"
