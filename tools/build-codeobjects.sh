#!/bin/sh
# Compiles the GEMM kernel (kernels/gpu/gemm.cu) offline into AMD GPU code
# objects for every arch rocmd serves, with clang-19 and compiler builtins only
# (-nogpulib -nogpuinc: no ROCm device libraries or headers), then checks each
# ELF's arch flags and resources with rocmd-codeobj. Per arch: the FMA path in
# fp32, fp16 and bf16 and the GEMV path (small M, lane shuffles) in fp32; on
# gfx11 also the RDNA3 WMMA path in fp16 and bf16 (and the skinny class's
# default tile in fp16), whose assembly must contain v_wmma instructions.
#
#   tools/build-codeobjects.sh OUTDIR [ROCMD-CODEOBJ]
#
# Exits 77 (skipped) when clang-19 is missing: apt-get install clang-19 lld-19.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../kernels/gpu/gemm.cu"
out=${1:?usage: build-codeobjects.sh OUTDIR [ROCMD-CODEOBJ]}
check=${2:-}
CLANG=${CLANG:-clang-19}
ARCHS=${ARCHS:-"gfx803 gfx902 gfx90c gfx906 gfx1010 gfx1011 gfx1012 gfx1031 gfx1032 gfx1034 gfx1035 gfx1036 gfx1103 gfx1150"}

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "SKIP: $CLANG not found (apt-get install clang-19 lld-19)"
	exit 77
fi
# The AMDGPU link step needs clang's own lld (an older one rejects elf64_amdgpu).
lld=$("$CLANG" -print-prog-name=ld.lld)
if ! [ -x "$lld" ] && ! command -v "$lld" >/dev/null 2>&1; then
	echo "SKIP: $CLANG has no ld.lld beside it (apt-get install lld-19)"
	exit 77
fi
mkdir -p "$out"
rm -f "$out"/gemm-*.co "$out"/gemm-*.s "$out"/jobs.txt

FMA="-DRK_MT0=64 -DRK_MT1=64 -DRK_DU=8 -DRK_TT0=4 -DRK_TT1=4 -DRK_VW=4 -DRK_PGR=1"
GEMV="-DRK_GV=1 -DRK_MT0=4 -DRK_MT1=32 -DRK_TT1=4 -DRK_DU=8 -DRK_VW=4 -DRK_GSU=2"
WMMA="-DRK_MC=1 -DRK_MT0=64 -DRK_MT1=64 -DRK_DU=32 -DRK_WM=2 -DRK_WN=2"
# The skinny class's default on the matrix cores (backend_cuda_space_dev): 16 x 64, 1 x 4 waves, split-K.
WMMA_SKINNY="-DRK_MC=1 -DRK_TA=1 -DRK_MT0=16 -DRK_MT1=64 -DRK_DU=64 -DRK_WM=1 -DRK_WN=4 -DRK_GSU=4"
for a in $ARCHS; do
	echo "$a fma-fp32 -DRK_DT=0 $FMA"
	echo "$a fma-fp16 -DRK_DT=1 $FMA"
	echo "$a fma-bf16 -DRK_DT=2 $FMA"
	echo "$a fma-sk-fp32 -DRK_DT=0 -DRK_SK=1 $FMA"
	echo "$a gemv-fp32 -DRK_DT=0 -DRK_TA=1 $GEMV"
	case $a in
	gfx11*)
		echo "$a wmma-fp16 -DRK_DT=1 $WMMA"
		echo "$a wmma-bf16 -DRK_DT=2 $WMMA"
		echo "$a wmma-skinny-fp16 -DRK_DT=1 $WMMA_SKINNY"
		;;
	esac
done > "$out/jobs.txt"

# One clang per code object, ${JOBS:-2} at a time.
# shellcheck disable=SC2016
OUTDIR="$out" CLANG="$CLANG" SRC="$src" xargs -P "${JOBS:-2}" -L 1 sh -c '
	arch=$1 variant=$2; shift 2
	o="$OUTDIR/gemm-$variant-$arch.co"
	"$CLANG" -x hip --offload-arch="$arch" -nogpulib -nogpuinc --cuda-device-only \
		--no-gpu-bundle-output -O3 -std=c++17 "$@" -c "$SRC" -o "$o" || exit 255
	case $variant in
	wmma-*)
		"$CLANG" -x hip --offload-arch="$arch" -nogpulib -nogpuinc --cuda-device-only \
			-O3 -std=c++17 "$@" -S "$SRC" -o "$o.s" || exit 255
		grep -q v_wmma_f32_16x16x16 "$o.s" || { echo "FAIL $o: no v_wmma in the assembly"; exit 255; }
		;;
	esac
' sh < "$out/jobs.txt" 2>&1 ||
	{
		echo "FAIL: a compilation failed"
		exit 1
	}
n=$(ls "$out"/gemm-*.co | wc -l)
echo "built $n code objects for $(echo "$ARCHS" | wc -w) archs with $("$CLANG" --version | head -1)"
if [ -n "$check" ]; then
	"$check" --expect-from-name "$out"/gemm-*.co
fi
