#!/bin/sh
# The GPU GEMM suite (bench/gpu-gemm/suite.h: 38 problems in each of fp32,
# fp16, bf16) and the host time per call, through the public C API
# (librocmd-gemm) against cuBLAS in the same process: bench-gemm-api-cublas
# (docs/PERF.md, "Through the public C API").
#
#   bench/gemm-api/h200.sh [bench-gemm-api-cublas options]    on the GPU machine
#   bench/gemm-api/h200.sh --pack [DIR]                       here (default .device/gemm-api)
#
# --pack builds the program with scripts/build.sh into build/ and copies it,
# librocmd-gemm and the shared libraries they load into DIR, for a GPU machine
# without rocmd's build dependencies. Run there, the script takes the packed
# program from .device/gemm-api/ (or $ROCMD_API_BENCH, or build/bench/); with
# none of them it configures and builds build-gpu/ itself, which needs rocmd's
# build dependencies there. Stops after ${LIMIT_S:-285} s.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${1:-}" = "--pack" ]; then
	D=${2:-.device/gemm-api}
	[ -x build/bench/bench-gemm-api-cublas ] || ./scripts/build.sh build >/dev/null
	cmake --build build --target bench-gemm-api-cublas rocmd-gemm >/dev/null
	rm -rf "$D"
	mkdir -p "$D"
	cp build/bench/bench-gemm-api-cublas "$D/"
	cp -P build/kernels/librocmd-gemm.so* "$D/"
	LD_LIBRARY_PATH="$D" ldd "$D/bench-gemm-api-cublas" "$D/librocmd-gemm.so" |
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
LD_LIBRARY_PATH="$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	exec timeout "${LIMIT_S:-285}" "$G" "$@"
