#!/bin/sh
# The HIP backend on Windows, under wine. No AMD GPU or runtime runs here:
# the HIP runtime and hiprtc are stand-in DLLs (tests/windows/fake-amdhip64.c,
# fake-hiprtc.c) that the backend must find by name, load and read as it
# would AMD's. It checks:
#   - no HIP runtime: rocmtune.exe reports the HIP backend not available,
#     naming the DLLs and the folders searched (exit 3), and the CPU backend
#     still tunes; rocmd.exe's probe passes over hip with that reason
#     (tune status: device.passed_over) and tunes a job on the CPU backend;
#   - the display driver's runtime alone (System32\amdhip64_6.dll of a
#     Radeon 780M): "no hiprtc", naming the runtime it loaded;
#   - an SDK (%HIP_PATH%\bin\hiprtc0602.dll) beside the driver's runtime: the
#     device is reported (gfx1103, 12 CUs); each candidate is compiled in a
#     child (rocmtune.exe started again) that loads the SDK's hiprtc and gets
#     the device's arch and the candidate's defines, and the stand-in's
#     refusal is a compile_failed outcome with its log, no crash, no child
#     left behind; a child that aborts is reported; the same in-process
#     (--no-isolate);
#   - a newer hiprtc (hiprtc0604.dll) is taken over the older, and what it
#     "compiles" the runtime refuses: "hipModuleLoadData failed";
#   - the SDK's own bin\amdhip64_6.dll (one that sees no GPU) is taken over
#     the driver's.
#
# Usage: test-hip-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Always in a wine prefix of its own: it puts a HIP runtime in System32,
# which the other stages' rocmd would find.
set -u
BUILD=$1
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
unset WINEPREFIX
win_prefix hipwin rocmd-hip
SYS=$C/windows/system32
SDK=$C/hip-sdk

cmake --build "$BUILD" --target rocmd rocmctl rocmtune fake-amdhip64 fake-amdhip64-780m \
	fake-hiprtc fake-hiprtc-code >"$OUT" 2>&1 || bail "the HIP stand-ins build"
cp "$BUILD/daemon/rocmd.exe" "$BUILD/client/rocmctl.exe" "$BUILD/tools/rocmtune.exe" \
	"$BUILD/kernels/librocmd-gemm.dll" "$T/"
rm -f "$SYS/amdhip64_6.dll" "$SYS/amdhip64_7.dll"

# rt NAME ARGS...: rocmtune.exe ARGS, output (CRs dropped) in $OUT, exit status in $rc.
rt() {
	wine 'C:\rocmd-hip\rocmtune.exe' "$@" >"$T/rt.raw" 2>&1
	rc=$?
	tr -d '\r' <"$T/rt.raw" >"$OUT"
}
# No compile child may outlive its run.
no_children() {
	sleep 1
	if prefix_procs 'rocmd-hiprtc|rocmd-tune-eval' >"$OUT"; then
		bad "no compile or evaluation process left behind ($1)"
	else
		ok "no compile or evaluation process left behind ($1)"
	fi
}
SHAPE="--shape 64x64x64 --budget 2 --no-seeds"

# ---- no HIP runtime ----
rt space --backend hip --shape 64x64x64 --list 1
if [ $rc -eq 3 ] && grep -q "backend hip: not available: no HIP runtime (amdhip64_7.dll, amdhip64_6.dll not found in %ROCMD_HIP_PATH%.bin, %HIP_PATH%.bin or System32" "$OUT" &&
	grep -qi 'C:.windows.system32.amdhip64_7.dll' "$OUT"; then
	ok "no runtime: rocmtune.exe says the HIP backend is not available, and why (exit 3)"
else
	bad "no runtime: rocmtune.exe says the HIP backend is not available, and why (exit $rc)"
fi
rt run --backend cpu --shape 32x64x64 --budget 5
[ $rc -eq 0 ] && grep -q "^best " "$OUT" && ok "no runtime: the CPU backend still tunes" ||
	bad "no runtime: the CPU backend still tunes (exit $rc)"

cat >"$T/hip.json" <<'JSON'
{
	"state_dir": "C:\\rocmd-hip\\state",
	"log": { "level": "info", "file": "C:\\rocmd-hip\\rocmd.log" },
	"tune": { "budget": 10, "check_ms": 500 }
}
JSON
wine 'C:\rocmd-hip\rocmd.exe' --foreground --config 'C:\rocmd-hip\hip.json' >"$T/console.out" 2>&1 &
DAEMON=$!
status_has() { ctl --json tune status >"$OUT" 2>&1 && tr -d '\n\t ' <"$OUT" | grep -q -- "$1"; }
wait_for "rocmd.exe: the probe passes over hip (no runtime) for the CPU backend" 120 \
	status_has '"backend":"cpu"'
if status_has '"passed_over":"hip:notavailable:noHIPruntime(amdhip64_7.dll,amdhip64_6.dllnotfoundin'; then
	ok "tune status: device.passed_over says why hip was passed over"
else
	bad "tune status: device.passed_over says why hip was passed over"
fi
ctl tune status >"$OUT" 2>&1
grep -q "^passed over *hip: not available: no HIP runtime" "$OUT" &&
	ok "rocmctl.exe tune status: the passed-over line" || bad "rocmctl.exe tune status: the passed-over line"
job_done() { ctl --json tune status >"$OUT" && tr -d '\n\t ' <"$OUT" | grep -q "\"id\":$1,\"state\":\"done\""; }
ctl tune add 32x64x64 --budget 6 >"$OUT" 2>&1
JOB=$(sed -n 's/^job \([0-9]*\) .*/\1/p' "$OUT")
ctl tune start >/dev/null 2>&1
wait_for "rocmd.exe tunes job ${JOB:-?} on the CPU backend" 300 job_done "${JOB:-0}"
ctl shutdown >/dev/null 2>&1
wait $DAEMON

# ---- the display driver's runtime, no SDK ----
cp "$BUILD/tests/windows/amdhip64_780m.dll" "$SYS/amdhip64_6.dll"
rt space --backend hip --shape 64x64x64 --list 1
if [ $rc -eq 3 ] && grep -q "not available: no hiprtc (hiprtc0701.dll ... hiprtc0602.dll, an SDK's) in .* for C:.windows.system32.amdhip64_6.dll" "$OUT"; then
	ok "the driver's runtime alone: loaded from System32, no hiprtc said"
else
	bad "the driver's runtime alone: loaded from System32, no hiprtc said (exit $rc)"
fi

# ---- an SDK's hiprtc beside the driver's runtime ----
mkdir -p "$SDK/bin"
cp "$BUILD/tests/windows/hiprtc0602.dll" "$SDK/bin/"
export HIP_PATH='C:\hip-sdk\'
rt space --backend hip --shape 64x64x64 --list 1
[ $rc -eq 0 ] && grep -q "^space hip (backend hip, device AMD Radeon 780M Graphics)" "$OUT" &&
	ok "with an SDK's hiprtc: the device is reported" ||
	bad "with an SDK's hiprtc: the device is reported (exit $rc)"
# shellcheck disable=SC2086
rt run --backend hip $SHAPE
if grep -q "on AMD Radeon 780M Graphics (gfx1103, 12 CUs), space hip" "$OUT"; then
	ok "rocmtune.exe run: gfx1103 with 12 CUs, from the runtime's device properties"
else
	bad "rocmtune.exe run: gfx1103 with 12 CUs, from the runtime's device properties"
fi
if [ $rc -eq 1 ] && grep -q "compile_failed .*hiprtc could not compile for gfx1103 (status 2, compile error): stand-in hiprtc: options --offload-arch=gfx1103 -O3 -std=c++17 -DRK_DT=0" "$OUT" &&
	grep -q "no configuration ran correctly: 2 evaluated (2 compile_failed)" "$OUT"; then
	ok "the compile child loads the SDK's hiprtc with the device's arch; its failure is compile_failed"
else
	bad "the compile child loads the SDK's hiprtc with the device's arch; its failure is compile_failed (exit $rc)"
fi
no_children "compile failed"
# hiprtc that aborts its process (Debian's HIP 5.2 for gfx11; the C runtime's
# abort() exits with 3 on Windows): the child's end, said, and the run goes on.
export ROCMD_TEST_HIPRTC_ABORT=1
# shellcheck disable=SC2086
rt run --backend hip $SHAPE
unset ROCMD_TEST_HIPRTC_ABORT
if [ $rc -eq 1 ] && grep -q "compile_failed .*hiprtc child for gfx1103 exited with 3 without an answer (hiprtc aborted?)" "$OUT" &&
	grep -q "2 evaluated (2 compile_failed)" "$OUT"; then
	ok "a compile child that aborts is reported and the run goes on"
else
	bad "a compile child that aborts is reported and the run goes on (exit $rc)"
fi
# shellcheck disable=SC2086
rt run --backend hip $SHAPE --no-isolate
grep -q "compile_failed .*stand-in hiprtc: options --offload-arch=gfx1103" "$OUT" && [ $rc -eq 1 ] &&
	ok "the same with --no-isolate (the compile child started from rocmtune.exe itself)" ||
	bad "the same with --no-isolate (exit $rc)"

# ---- a newer hiprtc first; its output no runtime loads ----
cp "$BUILD/tests/windows/hiprtc_code.dll" "$SDK/bin/hiprtc0604.dll"
# shellcheck disable=SC2086
rt run --backend hip $SHAPE
if [ $rc -eq 1 ] && grep -q "compile_failed .*hipModuleLoadData failed: 200" "$OUT" &&
	! grep -q "stand-in hiprtc: options" "$OUT"; then
	ok "hiprtc0604.dll is taken over hiprtc0602.dll; a code object the runtime refuses fails cleanly"
else
	bad "hiprtc0604.dll is taken over hiprtc0602.dll; a code object the runtime refuses fails cleanly (exit $rc)"
fi
no_children "module refused"

# ---- the SDK's own runtime over the driver's ----
cp "$BUILD/tests/windows/amdhip64_6.dll" "$SDK/bin/amdhip64_6.dll"
rt space --backend hip --shape 64x64x64 --list 1
if [ $rc -eq 3 ] && grep -q "backend hip: not available: no AMD GPU 0 (hipInit 0, 0 devices)" "$OUT"; then
	ok "the SDK's bin\\amdhip64_6.dll is taken over System32's"
else
	bad "the SDK's bin\\amdhip64_6.dll is taken over System32's (exit $rc)"
fi
unset HIP_PATH
rm -f "$SYS/amdhip64_6.dll"
harness_done "windows HIP backend"
