#!/bin/sh
# rocmctl bench on a GPU machine, end to end through the installed commands:
# a private rocmd (tune.backend cuda, no families) tunes SHAPES (budget
# BUDGET, at most TUNE_S seconds), then `rocmctl bench` measures them for the
# machine's variants (cublas against rocmd on an NVIDIA GPU), ROUNDS rounds,
# each variant in its own process, and `bench compare` of two such runs.
# The figures are docs/PERF.md's ("rocmctl bench").
#
#   bench/rocmctl-bench/gpu.sh --pack          here: rocmd, rocmctl, rocmtune,
#                                              librocmd-gemm and their libraries
#                                              into .device/bench
#   bench/rocmctl-bench/gpu.sh                 there (SHAPES, BUDGET 16, TUNE_S 240,
#                                              ROUNDS 5)
#
# Outputs go to $OUT (the device tool's folder) or /tmp/rocmd-bench-gpu.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${1:-}" = "--pack" ]; then
	D=.device/bench
	cmake --build build --target rocmd rocmctl rocmtune rocmd-gemm >/dev/null
	rm -rf "$D"
	mkdir -p "$D"
	cp build/daemon/rocmd build/client/rocmctl build/tools/rocmtune "$D/"
	cp -L build/kernels/librocmd-gemm.so.1 "$D/"
	LD_LIBRARY_PATH="$D" ldd "$D/rocmd" "$D/rocmctl" "$D/rocmtune" "$D/librocmd-gemm.so.1" |
		awk '/=> \// {print $3}' | sort -u |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
		grep -v "$D/" | while read -r lib; do cp -L "$lib" "$D/"; done
	du -sh "$D"
	exit 0
fi
D=$(cd .device/bench && pwd)
S=/tmp/rocmd-bench-gpu
O=${OUT:-$S}
SHAPES=${SHAPES:-TN:4096x16x4096,TN:4096x512x4096}
rm -rf "$S"
mkdir -p "$S" "$O"
printf '{"tune": {"backend": "cuda", "families": 0, "budget": %d, "idle_s": 3600, "check_ms": 200, "max_cpu_load": 10000, "ac_only": 0}}\n' \
	"${BUDGET:-16}" >"$S/rocmd.json"
export LD_LIBRARY_PATH="$D" ROCMD_ROCMTUNE="$D/rocmtune" XDG_STATE_HOME="$S/user"
"$D/rocmd" --state-dir "$S/state" --socket "$S/sock" --config "$S/rocmd.json"
C="$D/rocmctl --socket $S/sock"
# The daemon probes the tuning device first (seconds on a GPU): until then
# `tune add` says so (exit 1), and is asked again.
add() {
	n=0
	until "$@"; do
		n=$((n + 1))
		[ "$n" -lt 60 ] || return 1
		sleep 1
	done
}
for s in $(echo "$SHAPES" | tr ',' ' '); do
	case $s in ??:*) add $C tune add "${s#???}" --trans "${s%%:*}" ;; *) add $C tune add "$s" ;; esac
done
$C tune start >/dev/null
t=0
while [ "$t" -lt "${TUNE_S:-240}" ] && $C --json tune status | grep -q '"queued":[[:space:]]*[1-9]\|"running":[[:space:]]*[1-9]'; do
	sleep 5
	t=$((t + 5))
done
$C tune pause >/dev/null 2>&1 || true
echo "## $(date -u +%T) tuned for $t s"
$C tune results 2>&1 | tee "$O/results.txt"
$C bench --shapes "$SHAPES" --rounds "${ROUNDS:-5}" 2>&1 | tee "$O/bench1.txt"
$C bench --shapes "$SHAPES" --rounds "${ROUNDS:-5}" >"$O/bench2.txt" 2>&1
A=$(ls "$XDG_STATE_HOME/rocmd/bench" | sed -n 1p)
B=$(ls "$XDG_STATE_HOME/rocmd/bench" | sed -n 2p)
$C bench compare "${A%.json}" "${B%.json}" 2>&1 | tee "$O/compare.txt"
cp "$XDG_STATE_HOME/rocmd/bench/$A" "$O/run1.json"
$C shutdown >/dev/null 2>&1 || true
