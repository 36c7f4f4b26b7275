#!/bin/sh
# SDK discovery figures (docs/PERF.md, "SDK discovery"):
#  1. change latency: a simulated install copies a real SDK tree of more than
#     1,000 files (Debian's HIP 5.7.1 and rocBLAS 5.5.1 files in AMD's /opt
#     layout, with the machine's /usr/include/linux and /usr/include/c++ as the SDK's headers) into
#     /opt/rocm-6.0.0 of a sandbox root while rocmd --root watches; reported:
#     the time from the last file written (newest ctime in the tree) to the
#     sdk.added event, and how many scans the install caused (must be one);
#  2. fingerprint throughput on the real rocBLAS 5.5.1 library folder (2.2 GB,
#     24 files) against sha256sum over the same files, both warm, in the same
#     run, alternating.
#
# Usage: bench/sdk/sdk.sh [BUILD-DIR]   (default: build)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" && pwd)
ROCMD=$BUILD/daemon/rocmd
CTL=$BUILD/client/rocmctl
FP=$BUILD/bench/sdk-fingerprint
T=$HERE/../../tests/fixtures/make-trees.sh
CACHE=$("$T" --full | tail -1)
TREES=$CACHE/trees
DIR=$(mktemp -d /tmp/rocmd-bench-sdk-XXXXXX)
trap '[ -S "$DIR/rocmd.sock" ] && "$CTL" -S "$DIR/rocmd.sock" shutdown >/dev/null 2>&1; sleep 0.3; rm -rf "$DIR"' EXIT
ctl() { "$CTL" -S "$DIR/rocmd.sock" "$@"; }
scans() { ctl --json sdk list | sed -n 's/.*"scans":[[:space:]]*\([0-9]*\).*/\1/p'; }

# The install source: a real tree, > 1,000 files.
SRC=$DIR/src
mkdir -p "$SRC/lib/rocblas" "$SRC/share/hip" "$SRC/bin"
L=$TREES/trixie/usr/lib/x86_64-linux-gnu
cp -a "$L"/libamdhip64.so* "$L"/librocblas.so* "$SRC/lib/"
cp -a "$L/rocblas/2.47.0/library" "$SRC/lib/rocblas/library"
cp -a "$TREES/trixie/usr/share/hip/version" "$SRC/share/hip/"
cp -a "$TREES/trixie/usr/bin/." "$SRC/bin/"
mkdir -p "$SRC/include"
cp -a /usr/include/linux /usr/include/c++ "$SRC/include/" # C++ and kernel headers
cp -a "$TREES/trixie/usr/include/hip" "$SRC/include/"
NFILES=$(find "$SRC" -type f | wc -l)
SIZE=$(du -sh "$SRC" | cut -f1)

for window in 1000 2000; do
	rm -rf "$DIR/root" "$DIR/state"
	mkdir -p "$DIR/root/opt"
	printf '{"sdk": {"debounce_ms": %d}}\n' "$window" >"$DIR/rocmd.json"
	"$ROCMD" --state-dir "$DIR/state" --socket "$DIR/rocmd.sock" --config "$DIR/rocmd.json" \
		--root "$DIR/root"
	while [ -z "$(scans)" ] || [ "$(scans)" -lt 1 ]; do sleep 0.1; done
	before=$(scans)
	cat "$SRC/lib/rocblas/library/"* >/dev/null # the source in the page cache
	cp -r "$SRC" "$DIR/root/opt/rocm-6.0.0"
	# Newest ctime in the installed tree, in ms: the last file written.
	last=$(find "$DIR/root/opt/rocm-6.0.0" -printf '%C@\n' | sort -n | tail -1)
	i=0
	until ctl --json events --all --kind sdk.added | grep -q rocm-6.0.0; do
		sleep 0.05
		i=$((i + 1))
		[ $i -lt 1200 ] || { echo "no sdk.added event within 60 s"; exit 1; }
	done
	sleep $((window / 1000 + 2)) # room for a second, unwanted scan to show up
	ev=$(ctl --json events --all --kind sdk.added | grep rocm-6.0.0 |
		sed -n 's/.*"time_ms":[[:space:]]*\([0-9]*\).*/\1/p' | head -1)
	after=$(scans)
	awk -v ev="$ev" -v last="$last" -v w="$window" -v n="$NFILES" -v sz="$SIZE" \
		-v s=$((after - before)) 'BEGIN {
		lat = ev / 1000 - last;
		printf "install of %d files (%s), debounce %d ms: last write -> sdk.added %.2f s (limit %.2f s), scans caused: %d\n",
			n, sz, w, lat, w / 1000 + 1, s }'
	ctl shutdown >/dev/null
	sleep 0.5
done

# Fingerprint throughput vs sha256sum, same files, warm, alternating.
LIB=$TREES/trixie-lib-full
cat "$LIB"/* >/dev/null
for r in 1 2 3; do
	"$FP" "$LIB" 1 | sed 's/^/rocmd fingerprint: /'
	t0=$(date +%s.%N)
	(cd "$LIB" && sha256sum -- * >/dev/null)
	t1=$(date +%s.%N)
	bytes=$(cat "$LIB"/* | wc -c)
	awk -v a="$t0" -v b="$t1" -v n="$bytes" 'BEGIN { printf "sha256sum: bytes %d seconds %.3f MB/s %.0f\n", n, b - a, n / (b - a) / 1e6 }'
done
