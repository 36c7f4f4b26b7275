#!/bin/sh
# Packs the CUDA test of the public C API (test-gemm-api-cuda), the kernel
# paths' check (test-gemm-gpu), the re-tune benchmark (bench-retune),
# librocmd-gemm and the shared libraries they load into DIR, for a GPU machine
# that has the NVIDIA driver and NVRTC but none of rocmd's build dependencies.
# Then, there:
#   LD_LIBRARY_PATH=DIR DIR/test-gemm-api-cuda
#   LD_LIBRARY_PATH=DIR DIR/test-gemm-gpu
#   LD_LIBRARY_PATH=DIR DIR/bench-retune live --backend cuda --shape 2048x2048x2048 ...
# usage: tests/gpu/pack-device.sh [BUILD-DIR] [DIR]   (default: build .device/tunedlib)
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build}
D=${2:-.device/tunedlib}
cmake --build "$B" --target test-gemm-api-cuda test-gemm-gpu rocmd-gemm bench-retune >/dev/null
rm -rf "$D"
mkdir -p "$D"
cp "$B/tests/gpu/test-gemm-api-cuda" "$B/tests/gpu/test-gemm-gpu" "$B/bench/bench-retune" "$D/"
cp -P "$B"/kernels/librocmd-gemm.so* "$D/"
# Everything they link except the C library itself.
LD_LIBRARY_PATH="$D" ldd "$D/test-gemm-api-cuda" "$D/test-gemm-gpu" "$D/bench-retune" \
	"$D/librocmd-gemm.so" |
	awk '/=> \// {print $3}' | sort -u |
	grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so|/ld-linux' |
	grep -v "$D/" | while read -r lib; do cp -L "$lib" "$D/"; done
du -sh "$D"
