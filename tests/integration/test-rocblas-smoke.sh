#!/bin/sh
# rocmd-rocblas-smoke's verdicts without an AMD GPU: a missing or GPU-less HIP
# runtime is "skipped: no GPU/runtime" (exit 77), the real Debian trixie
# runtime (when its tree is cached) too; with stand-in HIP and rocBLAS
# libraries (host memory, CPU GEMM) a correct result is "ok" and a result with
# one wrong element is "failed"; ROCBLAS_TENSILE_LIBPATH is set for overlays.
# The smoke test has never run against a real AMD GPU.
#
# Usage: test-rocblas-smoke.sh SMOKE FAKE-HIP FAKE-ROCBLAS FAKE-ROCBLAS-WRONG
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init smoke
SMOKE=$1 HIP=$2 RB=$3 WRONG=$4
run() { # run NAME EXIT TEXT ARGS...: the smoke test exits with EXIT and says TEXT
	name=$1 want=$2 text=$3
	shift 3
	"$SMOKE" "$@" >"$OUT" 2>&1
	got=$?
	if [ "$got" -eq "$want" ] && grep -q -- "$text" "$OUT"; then ok "$name"; else bad "$name (exit $got)" "$OUT"; fi
}
run "no runtime: skipped" 77 "^skipped: no GPU/runtime: cannot load" "$RB" /nonexistent/libamdhip64.so
ROCMD_FAKE_HIP_DEVICES=0 run "no GPU: skipped" 77 "^skipped: no GPU/runtime: the HIP runtime sees no GPU" "$RB" "$HIP"
run "correct GEMMs: ok" 0 "^ok: sgemm max_rel_err=.* hgemm max_rel_err=" "$RB" "$HIP"
run "a wrong sgemm element: failed" 1 "^failed: sgemm result wrong" "$WRONG" "$HIP"
run "no rocBLAS: failed" 1 "^failed: cannot load the deployed rocBLAS" /nonexistent/librocblas.so "$HIP"
ROCMD_FAKE_ROCBLAS_LIBPATH_CHECK=/x/library run "overlay: ROCBLAS_TENSILE_LIBPATH is set" 0 "^ok:" "$RB" "$HIP" /x/library
ROCMD_FAKE_ROCBLAS_LIBPATH_CHECK=/x/library run "without it the handle fails" 1 "^failed: rocblas_create_handle" "$RB" "$HIP"
T=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}/trixie/usr/lib/x86_64-linux-gnu
if [ -f "$T/libamdhip64.so.5" ]; then
	run "Debian's real HIP 5.7 runtime here: skipped" 77 "^skipped: no GPU/runtime" "$T/librocblas.so.0" "$T/libamdhip64.so.5"
else
	echo "# skip: no cached trixie tree for the real-runtime case"
fi
harness_done
