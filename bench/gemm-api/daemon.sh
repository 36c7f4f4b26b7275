#!/bin/sh
# What an application gets after the daemon's own idle tuning, end to end on
# a GPU machine: rocmd with its default queue (tune.families: the LLM shape
# families, for rocmd's kernels and for cuBLASLt as a vendor target), idle
# tuning for DAEMON_S seconds, then the suite of bench-gemm-api-cublas through
# librocmd-gemm opened on the library the daemon wrote (rocmd's winners, and
# cuBLASLt's where they were faster), against cuBLAS (docs/PERF.md, "After
# the daemon's tuning").
#
#   bench/gemm-api/h200.sh --pack           here (rocmd, rocmctl and the benchmark)
#   bench/gemm-api/daemon.sh [bench options] there (DAEMON_S, default 240; BUDGET, default 60)
#
# The state folder is /tmp/rocmd-api-daemon (emptied first); outputs go to $OUT
# (the device tool's folder) or that folder.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
D=$(cd "${ROCMD_API_PACK:-.device/gemm-api}" && pwd)
LT=
for f in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12 \
	/usr/local/cuda/lib64/libcublasLt.so; do
	[ -e "$f" ] && { LT=$f; break; }
done
[ -n "$LT" ] || { echo "daemon.sh: no libcublasLt under /usr/local/cuda/lib64" >&2; exit 1; }
S=/tmp/rocmd-api-daemon
rm -rf "$S"
mkdir -p "$S"
O=${OUT:-$S}
printf '{"tune": {"backend": "cuda", "libraries": "cublaslt:%s", "families": 1, "budget": %d, "idle_s": 1, "check_ms": 200, "max_cpu_load": 10000, "ac_only": 0}}\n' \
	"$LT" "${BUDGET:-60}" >"$S/rocmd.json"
export LD_LIBRARY_PATH="$D"
"$D/rocmd" --state-dir "$S/state" --socket "$S/sock" --config "$S/rocmd.json"
C="$D/rocmctl --socket $S/sock"
$C tune start
echo "## $(date -u +%T) idle tuning started; the suite after ${DAEMON_S:-240} s"
sleep "${DAEMON_S:-240}"
$C tune pause >/dev/null 2>&1 || true
$C tune results >"$O/results.txt" 2>&1 || true
$C shutdown >/dev/null 2>&1 || true
sleep 2
grep -i -E 'library|written|tuned/' "$S/state/rocmd.log" | tail -5 || true
cut -c1-170 "$O/results.txt" | head -30
L=$(ls -d "$S"/state/tuned/sm_* 2>/dev/null | head -1)
[ -n "$L" ] || { echo "## the daemon wrote no tuned library"; exit 1; }
echo "## $(date -u +%T) the suite through librocmd-gemm on $L"
rc=0
timeout "${BENCH_S:-200}" "$D/bench-gemm-api-cublas" --lib "$L" "$@" >"$O/gemm-api-daemon.txt" 2>&1 || rc=$?
sed -e 's/  \(exact\|nearest\|default\): \([a-z]*\):.*/  \1 \2/' -e 's/  \(exact\|nearest\|default\): .*/  \1/' \
	"$O/gemm-api-daemon.txt" | grep -v '^# host\|^[a-z0-9]* *[NT][NT] *[0-9]* *[0-9]* *[0-9]*  ' || true
echo "## $(date -u +%T) done, exit $rc"
exit $rc
