#!/bin/sh
# The tuner and idle tuning on Windows, under wine: the real rocmd.exe
# (console mode, the CPU backend) and rocmctl.exe over \\.\pipe\rocmd, and
# rocmtune.exe. Each candidate is measured in an evaluation process that is
# rocmd.exe (rocmtune.exe) started again with a hidden argument, in a job
# object (common/spawn-win.c, kernels/measure-proc.c). It checks: the device
# is probed in such a process; `tune add` queues a job and `tune start` runs
# it to a winner with ok evaluations; `tune results` lists it; a candidate
# planted to crash (ROCMD_TUNE_PLANT, the CPU backend's test hook) is
# recorded as crashed and the job still finishes; `tune pause` yields a
# running job; the tuned library is written under the state folder;
# rocmtune.exe runs a budget of 10, and a candidate planted to hang is ended
# at its time limit; rocmtune.exe bench-run on the CPU and on the rocblas
# backend (the stand-in DLLs of tests/fixtures/vendor), its sensors not
# reported and saying why (kernels/sensors-win.c); a session's input idleness reported by
# tune.input and by rocmd-idle-agent.exe becomes tune status's input source.
#
# Usage: test-tune-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
BUILD=$1
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
win_prefix tunewin rocmd-tune
DB=$T/state/rocmd.db

status_has() { ctl --json tune status >"$OUT" && grep -q -- "$1" "$OUT"; }
state_is() { [ "$(ctl --json tune status | jstr state)" = "$1" ]; }
job_state() { ctl --json tune status >"$OUT" && tr -d '\n\t ' <"$OUT" | grep -q "\"id\":$1,\"state\":\"$2\""; }

cp "$BUILD/daemon/rocmd.exe" "$BUILD/client/rocmctl.exe" "$BUILD/tools/rocmtune.exe" \
	"$BUILD/kernels/librocmd-gemm.dll" "$BUILD/client/rocmd-idle-agent.exe" "$T/"
cat >"$T/tune.json" <<'JSON'
{
	"state_dir": "C:\\rocmd-tune\\state",
	"log": { "level": "info", "file": "C:\\rocmd-tune\\rocmd.log" },
	"tune": { "backend": "cpu", "budget": 40, "check_ms": 500 }
}
JSON

start=$(date +%s)
# Candidates with UNROLL=1 crash in the evaluation process (the CPU
# backend's test hook): the tuner must record them and carry on.
ROCMD_TUNE_PLANT=crash:UNROLL=1 wine 'C:\rocmd-tune\rocmd.exe' --foreground \
	--config 'C:\rocmd-tune\tune.json' >"$T/console.out" 2>&1 &
DAEMON=$!
wait_for "the CPU backend probed in an evaluation process" 120 status_has '"backend":[[:space:]]*"cpu"'
ctl tune add 32x64x64 --budget 40 >"$OUT" 2>&1
JOB=$(sed -n 's/^job \([0-9]*\) .*/\1/p' "$OUT")
[ -n "$JOB" ] && ok "rocmctl.exe tune add queues job $JOB" || bad "rocmctl.exe tune add"
ctl tune start >"$OUT" 2>&1 && ok "rocmctl.exe tune start" || bad "rocmctl.exe tune start"
wait_for "the job finishes with a winner" 300 job_state "${JOB:-0}" done
ctl tune results >"$OUT"
if grep -q "fp32 NN 32x64x64 .*MT0=" "$OUT"; then ok "rocmctl.exe tune results lists the winner"; else
	bad "rocmctl.exe tune results lists the winner"
fi
sed 's/^/#   /' "$OUT"
wait_for "the tuned library is written (event)" 60 has_event tune.library "tuned library written"
lib=$(find "$T/state/tuned" -name index.json 2>/dev/null | head -n 1)
if [ -n "$lib" ] && [ -f "$(dirname "$(dirname "$lib")")/CURRENT" ] && grep -q '"entries"' "$lib"; then
	ok "the tuned library on disk: $(echo "$lib" | sed "s|$C|C:|")"
else
	: >"$OUT"
	bad "the tuned library on disk"
fi

# Pause: a long job yields, and stays paused.
# (Not a default shape: the CPU defaults, 8x256x256 and 64x256x256, are queued
# with a small budget, and an add of the same shape would name that job.)
ctl tune add 48x256x256 --budget 5000 >"$OUT" 2>&1
LONG=$(sed -n 's/^job \([0-9]*\) .*/\1/p' "$OUT")
ctl tune start >/dev/null 2>&1
wait_for "a long job runs" 120 job_state "${LONG:-0}" running
sleep 3
ctl tune pause >"$OUT" 2>&1
wait_for "tune pause: the job yields" 60 has_event tune.yielded "yielded (paused)"
wait_for "tune status: paused" 30 state_is paused
ctl tune status | sed 's/^/#   /'

# A session's agent reports its input idleness: the input source becomes
# the session agent, with the idle time the least a fresh report says.
ctl call tune.input '{"idle_ms": 600000}' >"$OUT" 2>&1 &&
	ok "tune.input from this session is taken" || bad "tune.input from this session is taken"
ctl --json tune status >"$OUT" 2>&1
if grep -q '"input_source":[[:space:]]*"session agent (1)"' "$OUT" &&
	grep -q '"input_idle_s":[[:space:]]*60[0-9]' "$OUT"; then
	ok "tune status: input from the session agent, idle 600 s"
else
	bad "tune status: input from the session agent, idle 600 s"
fi
ctl call tune.input '{"idle_ms": -5}' >"$OUT" 2>&1 && bad "a negative idle time is refused" ||
	ok "a negative idle time is refused"
wine 'C:\rocmd-tune\rocmd-idle-agent.exe' --once >"$OUT" 2>&1 &&
	ok "rocmd-idle-agent.exe --once reports (GetLastInputInfo)" ||
	bad "rocmd-idle-agent.exe --once reports (GetLastInputInfo)"
ctl --json tune status >"$OUT" 2>&1
grep -q '"input_source":[[:space:]]*"session agent (1)"' "$OUT" &&
	! grep -q '"input_idle_s":[[:space:]]*60[0-9]' "$OUT" &&
	ok "the agent's report replaces the session's earlier one" ||
	bad "the agent's report replaces the session's earlier one"

ctl shutdown >/dev/null
wait $DAEMON
# The daemon is gone: its database can be read from here.
ev_ok=$(sql "SELECT count(*) FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE '%:32x64x64:%' AND e.outcome = 'ok'")
ev_crash=$(sql "SELECT count(*) FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE '%:32x64x64:%' AND e.outcome = 'crashed'")
echo "# job $JOB: $ev_ok ok evaluations, $ev_crash crashed"
[ "${ev_ok:-0}" -ge 5 ] && ok "ok evaluations stored ($ev_ok)" || bad "ok evaluations stored (${ev_ok:-none})"
[ "${ev_crash:-0}" -ge 1 ] && ok "crashing candidates isolated and recorded as crashed ($ev_crash)" ||
	bad "crashing candidates isolated and recorded as crashed (${ev_crash:-none})"
sql "SELECT detail FROM tune_eval WHERE outcome = 'crashed' LIMIT 1" | sed 's/^/#   /'
winner=$(sql "SELECT winner_config FROM tune_job WHERE problem LIKE '%:32x64x64:%'")
case $winner in
*UNROLL=1\;* | *UNROLL=1) bad "the winner is not a crashing candidate ($winner)" ;;
"") bad "a winner is stored" ;;
*) ok "the winner is not a crashing candidate" ;;
esac

# rocmtune.exe: a run of 10, then a candidate that hangs ended at its time limit.
wine 'C:\rocmd-tune\rocmtune.exe' run --backend cpu --shape 32x64x64 --budget 10 \
	--db 'C:\rocmd-tune\rocmtune.db' >"$T/rt.raw" 2>&1
rc=$?
tr -d '\r' <"$T/rt.raw" >"$OUT"
if [ $rc -eq 0 ] && grep -q "^best " "$OUT" && grep -q "ok=" "$OUT"; then
	ok "rocmtune.exe run --backend cpu --budget 10"
	sed 's/^/#   /' "$OUT"
else
	bad "rocmtune.exe run --backend cpu --budget 10 (exit $rc)"
fi
ROCMD_TUNE_PLANT=hang: wine 'C:\rocmd-tune\rocmtune.exe' run --backend cpu --shape 32x64x64 \
	--budget 2 --timeout 3000 --no-seeds >"$T/rt.raw" 2>&1
tr -d '\r' <"$T/rt.raw" >"$OUT"
if grep -q "timeout .*no result within 3000 ms; killed" "$OUT"; then ok "rocmtune.exe: a hanging candidate is ended at its time limit"; else
	bad "rocmtune.exe: a hanging candidate is ended at its time limit"
fi
# (Exited wine processes may linger as Unix zombies: those are gone for Windows.)
sleep 1
if prefix_procs 'rocmd-tune-eval' >/dev/null; then
	: >"$OUT"
	bad "no evaluation process left behind"
else
	ok "no evaluation process left behind"
fi

# rocmtune.exe bench-run (rocmctl bench's variant process) and the sensors
# (kernels/sensors-win.c): wine has no GPU adapter for DXGI and no PDH GPU
# counters, so every figure is not reported, with the reason, and the bench
# still runs (exit 0 on the CPU).
wine 'C:\rocmd-tune\rocmtune.exe' bench-run --backend cpu --api --problems fp32:NN:64x64x64:b1 \
	--runs 3 --energy-ms 50 >"$T/rt.raw" 2>/dev/null
rc=$?
tr -d '\r' <"$T/rt.raw" >"$OUT"
if [ $rc -eq 0 ] && grep -q '"sensors":"none: backend cpu has no GPU sensors"' "$OUT" &&
	grep -q '"outcome":"ok"' "$OUT" && grep -q '"device_mem_bytes":null' "$OUT" &&
	grep -q '"energy_j":null,"energy_why":"not reported"' "$OUT"; then
	ok "rocmtune.exe bench-run on the CPU: timed, memory and energy not reported (no sensors)"
else
	bad "rocmtune.exe bench-run on the CPU: timed, memory and energy not reported (exit $rc)"
fi
for be in rocblas cuda; do
	wine 'C:\rocmd-tune\rocmtune.exe' bench-run --backend $be --problems fp32:NN:64x64x64:b1 \
		--runs 3 >"$T/rt.raw" 2>/dev/null
	rc=$?
	tr -d '\r' <"$T/rt.raw" >"$OUT"
	# (No runtime here: exit 3, the backend not available; the sensors still answer.)
	if [ $rc -eq 3 ] && grep -q '"sensors":"\(none: DXGI lists [^"]*\|DXGI adapter [^"]*memory in use not reported ([^"]*)\); power and energy are not read (no ADLX or NVML on Windows)"' "$OUT" &&
		grep -q '"unavailable":true' "$OUT"; then
		ok "rocmtune.exe bench-run --backend $be: the sensors say why they report nothing"
		sed -n 's/.*\("sensors":"[^"]*"\).*/#   \1/p' "$OUT"
	else
		bad "rocmtune.exe bench-run --backend $be: the sensors say why they report nothing (exit $rc)"
	fi
done

# A GPU backend that runs: rocblas on the stand-in rocBLAS and HIP runtime
# (tests/fixtures/vendor as DLLs): the GEMM is timed, the sensors report nothing.
mkdir -p "$T/vendor"
cp "$BUILD/tests/windows/vendor/rocblas.dll" "$BUILD/tests/windows/vendor/amdhip64_6.dll" "$T/vendor/"
wine 'C:\rocmd-tune\rocmtune.exe' bench-run --backend rocblas --library 'C:\rocmd-tune\vendor\rocblas.dll' \
	--problems fp16:TN:256x16x256:b1 --runs 3 --energy-ms 50 >"$T/rt.raw" 2>/dev/null
rc=$?
tr -d '\r' <"$T/rt.raw" >"$OUT"
if [ $rc -eq 0 ] && grep -q '"arch":"gfx1103"' "$OUT" && grep -q '"outcome":"ok"' "$OUT" &&
	grep -q '"sensors":"none: DXGI lists [^"]*; power and energy are not read' "$OUT" &&
	grep -q '"device_mem_bytes":null' "$OUT" && grep -q '"energy_j":null,"energy_why":"not reported"' "$OUT"; then
	ok "rocmtune.exe bench-run --backend rocblas (stand-in): timed, memory and energy not reported"
else
	bad "rocmtune.exe bench-run --backend rocblas (stand-in): timed, memory and energy not reported (exit $rc)"
fi

# A DLL a user planted in a folder of PATH under a vendor library's name is
# never loaded: a bare name is looked for in rocmd's folder and System32
# only. The rocblas backend finds the stand-in HIP runtime in its SDK folder
# (ROCMD_HIP_PATH) but no rocblas.dll there, and then asks for rocblas.dll by
# name: the PATH search of the loader's default would load the planted one.
mkdir -p "$T/planted" "$T/hiponly/bin"
cp "$BUILD/tests/windows/vendor/amdhip64_6.dll" "$T/hiponly/bin/"
for n in rocblas.dll hipblaslt.dll cublasLt64_13.dll nvrtc64_130_0.dll; do
	cp "$BUILD/tests/windows/planted.dll" "$T/planted/$n"
done
rm -f "$T/planted.mark"
for b in rocblas hipblaslt; do
	WINEPATH='C:\rocmd-tune\planted' ROCMD_PLANTED_MARK='C:\rocmd-tune\planted.mark' \
		ROCMD_HIP_PATH='C:\rocmd-tune\hiponly' \
		wine 'C:\rocmd-tune\rocmtune.exe' run --backend $b --dtype fp16 --trans TN \
		--shape 256x16x256 --budget 1 --no-isolate >"$T/rt.raw" 2>&1
done
tr -d '\r' <"$T/rt.raw" >"$OUT"
if [ ! -f "$T/planted/rocblas.dll" ]; then
	bad "the planted DLL is built"
elif [ -e "$T/planted.mark" ]; then
	bad "a DLL planted on PATH under a library's name is not loaded"
elif grep -q "not available: no hipBLASLt" "$OUT"; then
	ok "a DLL planted on PATH under a library's name is not loaded"
else
	bad "a DLL planted on PATH under a library's name is not loaded ($(head -c 300 "$OUT"))"
fi

echo "# tuner under wine: $(($(date +%s) - start)) s"
harness_done "windows tuner"
