#!/bin/sh
# A vendor library's solutions against its default choice on the LLM shape
# families (bench/vendor-gemm/vendor-gemm.c; docs/PERF.md, "Vendor solutions").
#
#   bench/vendor-gemm/run.sh [--build DIR] [bench-vendor-gemm options]
#   bench/vendor-gemm/run.sh --dtype fp16 --tokens 1,16,512,4096
#   bench/vendor-gemm/run.sh --standin [options]   (the stand-in rocBLAS, no GPU)
#   bench/vendor-gemm/run.sh --pack DIR
#
# Builds bench-vendor-gemm with scripts/build.sh into DIR (default build/) when
# it is not there. For a GPU machine without rocmd's build dependencies,
# --pack copies the program (and rocmtune) and the shared libraries they link
# into DIR here;
# there, ROCMD_VENDOR_GEMM=DIR/bench-vendor-gemm bench/vendor-gemm/run.sh
# [options] runs it (cuBLASLt and cuBLAS are the machine's own).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build
PACK=""
STANDIN=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--pack) PACK=$2; shift 2 ;;
	--standin) STANDIN=1; shift ;;
	*) break ;;
	esac
done
G=${ROCMD_VENDOR_GEMM:-$BUILD/bench/bench-vendor-gemm}
if [ ! -x "$G" ]; then
	[ -z "${ROCMD_VENDOR_GEMM:-}" ] || { echo "run.sh: $G is not a program" >&2; exit 1; }
	echo "run.sh: building bench-vendor-gemm into $BUILD" >&2
	"$ROOT/scripts/build.sh" "$BUILD" >&2
fi
if [ -n "$PACK" ]; then
	mkdir -p "$PACK"
	cp "$G" "$PACK/"
	# rocmtune too, for `rocmtune run --backend cublaslt` (isolated evaluations) there.
	T=$(dirname "$G")/../tools/rocmtune
	[ -x "$T" ] && cp "$T" "$PACK/"
	ldd "$G" ${T:+$( [ -x "$T" ] && echo "$T")} | awk '/=> \// { print $3 }' | sort -u |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
		while read -r lib; do cp -L "$lib" "$PACK/"; done
	ls "$PACK"
	exit 0
fi
if [ "$STANDIN" = 1 ]; then
	V=$BUILD/tests/fixtures/vendor
	set -- --backend rocblas --library "$V/sdk-a/lib/librocblas.so.4" --sysroot "$V/sysroot" "$@"
fi
command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
		--format=csv,noheader 2>/dev/null || true
LD_LIBRARY_PATH="$(dirname "$G")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$G" "$@"
