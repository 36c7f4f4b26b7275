#!/bin/sh
# The GPU GEMM suite (bench/gpu-gemm/suite.h: 38 problems in each of fp32,
# fp16, bf16) and the host time per call, through the public C API
# (librocmd-gemm) against cuBLAS in the same process: bench-gemm-api-cublas
# (docs/PERF.md, "Through the public C API"); then, where it was packed,
# test-gemm-gpu, every kernel path and every problem's class default against
# the double reference (CHECK=0 leaves it out). BEST=1 runs the benchmark with
# a tuned library of bench/gpu-gemm/best-h200.txt instead of none.
#
#   bench/gemm-api/h200.sh [bench-gemm-api-cublas options]    on the GPU machine
#   bench/gemm-api/h200.sh --pack [DIR]                       here (default .device/gemm-api)
#
# --pack builds the program with scripts/build.sh into build/ and copies it,
# librocmd-gemm and the shared libraries they load into DIR, for a GPU machine
# without rocmd's build dependencies. Run there, the script takes the packed
# program from .device/gemm-api/ (or $ROCMD_API_BENCH, or build/bench/); with
# none of them it configures and builds build-gpu/ itself, which needs rocmd's
# build dependencies there. The benchmark stops after ${BENCH_S:-200} s, the
# check after ${CHECK_S:-80} s.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${1:-}" = "--pack" ]; then
	D=${2:-.device/gemm-api}
	[ -x build/bench/bench-gemm-api-cublas ] || ./scripts/build.sh build >/dev/null
	cmake --build build --target bench-gemm-api-cublas rocmd-gemm test-gemm-gpu >/dev/null
	rm -rf "$D"
	mkdir -p "$D"
	cmake --build build --target rocmd rocmctl >/dev/null
	cp build/bench/bench-gemm-api-cublas build/tests/gpu/test-gemm-gpu "$D/"
	cp build/daemon/rocmd build/client/rocmctl "$D/" # for bench/gemm-api/daemon.sh
	cp -L build/kernels/librocmd-gemm.so.1 "$D/" # its SONAME, a plain file: no links to carry
	LD_LIBRARY_PATH="$D" ldd "$D/bench-gemm-api-cublas" "$D/test-gemm-gpu" "$D/librocmd-gemm.so.1" \
		"$D/rocmd" "$D/rocmctl" |
		awk '/=> \// {print $3}' | sort -u |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
		grep -v "$D/" | while read -r lib; do cp -L "$lib" "$D/"; done
	du -sh "$D"
	exit 0
fi
G=${ROCMD_API_BENCH:-}
for c in .device/gemm-api/bench-gemm-api-cublas build/bench/bench-gemm-api-cublas; do
	[ -n "$G" ] || { [ -x "$c" ] && G=$c; } || true
done
if [ -z "$G" ]; then
	echo "h200.sh: no packed program: building build-gpu/ (needs rocmd's build dependencies)" >&2
	cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-gpu --target bench-gemm-api-cublas -j"$(nproc)" >/dev/null
	G=build-gpu/bench/bench-gemm-api-cublas
fi
echo "## $(date -u +%FT%TZ), $G"
command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
		--format=csv,noheader 2>/dev/null || true
D=$(dirname "$G")
export LD_LIBRARY_PATH="$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The whole output goes to $OUT (the device tool's folder) or /tmp; the terminal
# gets it without the configurations, which would not fit its tail.
L=${OUT:-${TMPDIR:-/tmp}}
rc=0
# BEST=1: through a library of bench/gpu-gemm/best-h200.txt's configurations.
[ "${BEST:-0}" = 1 ] && set -- --best bench/gpu-gemm/best-h200.txt "$@"
timeout "${BENCH_S:-200}" "$G" "$@" >"$L/gemm-api.txt" 2>&1 || rc=$?
sed -e 's/  \(exact\|nearest\|default\): .*/  \1/' "$L/gemm-api.txt"
[ $rc -eq 124 ] && echo "## the benchmark ran out of its ${BENCH_S:-200} s"
echo "## full table with configurations: $L/gemm-api.txt"
if [ "${CHECK:-1}" = 1 ] && [ -x "$D/test-gemm-gpu" ]; then
	echo "## $(date -u +%T) test-gemm-gpu: every kernel path and class default against the double reference"
	crc=0
	timeout "${CHECK_S:-80}" "$D/test-gemm-gpu" --threads 12 >"$L/test-gemm-gpu.txt" 2>&1 || crc=$?
	grep -v '^ok\|^pair ' "$L/test-gemm-gpu.txt" | tail -15
	[ $crc -eq 124 ] && echo "## test-gemm-gpu ran out of its ${CHECK_S:-80} s"
	[ $rc -ne 0 ] || rc=$crc
fi
# The figures again, last, where a cut tail still shows them.
echo "## summary: host time per call, failures, geometric means"
awk '/^# host time/ { h = 1 } /^# dtype group/ { h = 0 } h' "$L/gemm-api.txt"
grep -E 'FAIL|^# (fp16|bf16|fp32|all):' "$L/gemm-api.txt" | cut -c1-160
[ -f "$L/test-gemm-gpu.txt" ] && tail -1 "$L/test-gemm-gpu.txt"
echo "## $(date -u +%T) done, exit $rc"
exit $rc
