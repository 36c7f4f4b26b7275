#!/bin/sh
# The daemon's vendor tuning on a GPU machine, end to end: rocmd with a
# cuBLASLt target (tune.libraries) and the LLM shape families, `rocmctl tune
# start`, then `rocmctl tune results` after DAEMON_S seconds (docs/PERF.md,
# "Vendor solutions", "Through the daemon").
#
#   bench/vendor-gemm/daemon.sh --pack [DIR]   here: rocmd, rocmctl and the libraries
#                                              they link into DIR (default .device/vd)
#   bench/vendor-gemm/daemon.sh [DIR]          there (DAEMON_S, default 150; BUDGET, 24)
#
# The state folder is /tmp/rocmd-vendor-bench (emptied first); the outputs go
# to $OUT (the device tool's folder) or that folder.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${1:-}" = "--pack" ]; then
	D=${2:-.device/vd}
	[ -x build/daemon/rocmd ] || ./scripts/build.sh build >/dev/null
	rm -rf "$D"
	mkdir -p "$D"
	cp build/daemon/rocmd build/client/rocmctl "$D/"
	ldd "$D/rocmd" "$D/rocmctl" | awk '/=> \// { print $3 }' | sort -u |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
		while read -r lib; do cp -L "$lib" "$D/"; done
	du -sh "$D"
	exit 0
fi
D=$(cd "${1:-.device/vd}" && pwd)
LT=
for f in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12 \
	/usr/local/cuda/lib64/libcublasLt.so; do
	[ -e "$f" ] && { LT=$f; break; }
done
[ -n "$LT" ] || { echo "daemon.sh: no libcublasLt under /usr/local/cuda/lib64" >&2; exit 1; }
S=/tmp/rocmd-vendor-bench
rm -rf "$S"
mkdir -p "$S"
O=${OUT:-$S}
printf '{"tune": {"backend": "cuda", "libraries": "cublaslt:%s", "families": 1, "budget": %d, "idle_s": 1, "check_ms": 200, "max_cpu_load": 10000, "ac_only": 0}}\n' \
	"$LT" "${BUDGET:-24}" >"$S/rocmd.json"
export LD_LIBRARY_PATH="$D"
"$D/rocmd" --state-dir "$S/state" --socket "$S/sock" --config "$S/rocmd.json"
C="$D/rocmctl --socket $S/sock"
$C tune start
echo "## $(date -u +%T) tuning started; results after ${DAEMON_S:-150} s"
sleep "${DAEMON_S:-150}"
$C tune status >"$O/status.txt" 2>&1 || true
$C tune results >"$O/results.txt" 2>&1 || true
$C --json tune results >"$O/results.json" 2>&1 || true
$C shutdown >/dev/null 2>&1 || true
sleep 2
cp "$S/state/rocmd.log" "$O/" 2>/dev/null || true
echo "## $(date -u +%T) done"
grep -E '^(device|jobs|current)' "$O/status.txt" || true
cut -c1-170 "$O/results.txt" | head -45
