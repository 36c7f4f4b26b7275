#!/bin/sh
# rocmd's GEMM kernels against cuBLAS on an NVIDIA GPU: the suite of
# bench/gpu-gemm/gpu-gemm.c (square, layouts, odd shapes, LLM decode and
# prefill; fp32, fp16, bf16), one table (docs/PERF.md, "GPU GEMM").
#
#   bench/gpu-gemm/run.sh [--build DIR] [bench-gpu-gemm options]
#   bench/gpu-gemm/run.sh --dtype fp16 --filter llm
#   bench/gpu-gemm/run.sh --best bench/gpu-gemm/best-h200.txt   (best-known configurations)
#   bench/gpu-gemm/run.sh --pack DIR
#
# Builds bench-gpu-gemm with scripts/build.sh into DIR (default build/) when it
# is not there. For a GPU machine without rocmd's build dependencies, --pack
# copies the program and the shared libraries it loads into DIR here; there,
# ROCMD_GPU_GEMM=DIR/bench-gpu-gemm bench/gpu-gemm/run.sh [options] runs it.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build
PACK=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--pack) PACK=$2; shift 2 ;;
	*) break ;;
	esac
done
G=${ROCMD_GPU_GEMM:-$BUILD/bench/bench-gpu-gemm}
if [ ! -x "$G" ]; then
	[ -z "${ROCMD_GPU_GEMM:-}" ] || { echo "run.sh: $G is not a program" >&2; exit 1; }
	echo "run.sh: building bench-gpu-gemm into $BUILD" >&2
	"$ROOT/scripts/build.sh" "$BUILD" >&2
	[ -x "$G" ] || { echo "run.sh: no bench-gpu-gemm in $BUILD (it needs a CUDA toolkit to be found)" >&2; exit 1; }
fi
if [ -n "$PACK" ]; then
	mkdir -p "$PACK"
	cp "$G" "$PACK/"
	# Every library it links but the C library's own: the GPU machine may lack them.
	ldd "$G" | awk '/=> \// { print $3 }' |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
		while read -r lib; do cp -L "$lib" "$PACK/"; done
	ls "$PACK"
	exit 0
fi
command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
		--format=csv,noheader 2>/dev/null || true
LD_LIBRARY_PATH="$(dirname "$G")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$G" "$@"
