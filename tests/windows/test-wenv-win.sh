#!/bin/sh
# The machine environment rocmd writes its overrides' variables to on Windows
# (daemon/tune/tune-env-win.c: HKLM\SYSTEM\CurrentControlSet\Control\Session
# Manager\Environment), under wine's real registry: rocmd.exe (console mode)
# and rocmctl.exe doctor. ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH and
# HIPBLASLT_TUNING_OVERRIDE_FILE set there (wine reg add) to files that are
# not there: doctor reads them from the registry and names each, in that key,
# as an error that --fix can mend; `doctor --fix` runs the overrides'
# recovery, which deletes both values (rocmd keeps no override they could
# name), as `wine reg query` then shows; doctor finds nothing more; a value
# of another variable in the key is left alone. Then a live override: a
# rocBLAS shape tuned on the stand-in rocBLAS (tests/fixtures/vendor as
# DLLs), its file named by the registry value (reg query, and a program
# started then has it), tune off deletes the value and tune on sets it again;
# the file removed: doctor names it, --fix writes it again.
#
# Usage: test-wenv-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
BUILD=$1
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
win_prefix wenv rocmd-wenv
ENVKEY='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
RVAR=ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH
HVAR=HIPBLASLT_TUNING_OVERRIDE_FILE

# reg_value NAME: the value of NAME in the machine environment, as reg query prints it.
reg_value() {
	wine reg query "$ENVKEY" /v "$1" 2>/dev/null | tr -d '\r' | sed -n "s/^ *$1 *REG_SZ *//p"
}

cp "$BUILD/daemon/rocmd.exe" "$BUILD/client/rocmctl.exe" "$T/"
cat >"$T/wenv.json" <<'JSON'
{
	"state_dir": "C:\\rocmd-wenv\\state",
	"log": { "level": "info", "file": "C:\\rocmd-wenv\\rocmd.log" },
	"tune": { "idle_s": 2, "check_ms": 200, "budget": 40, "backend": "cpu", "max_cpu_load": 400,
		"families": 0, "enabled": 0, "libraries": "rocblas:C:\\rocmd-wenv\\lib\\rocblas.dll" }
}
JSON
# The stand-in rocBLAS and HIP runtime (tests/fixtures/vendor, built as DLLs) in one folder.
mkdir -p "$T/lib/rocblas/library"
cp "$BUILD/tests/windows/vendor/rocblas.dll" "$BUILD/tests/windows/vendor/amdhip64_6.dll" "$T/lib/"
echo "rocmd stand-in rocBLAS Tensile library, build 1" >"$T/lib/rocblas/library/TensileLibrary_lazy_gfx1103.dat"
wine 'C:\rocmd-wenv\rocmd.exe' --foreground --config 'C:\rocmd-wenv\wenv.json' >"$T/console.out" 2>&1 &
DAEMON=$!
wait_for "rocmd.exe serves rocmctl.exe" 60 ctl status

# Stale values: files that are not there (deleted by hand, a cleaner of the state folder).
wine reg add "$ENVKEY" /v "$RVAR" /t REG_SZ /d 'C:\rocmd-wenv\state\tune-overrides\gone\rocblas.csv' \
	/f >/dev/null 2>&1
wine reg add "$ENVKEY" /v "$HVAR" /t REG_SZ /d 'C:\rocmd-wenv\old\hipblaslt.txt' /f >/dev/null 2>&1
wine reg add "$ENVKEY" /v ROCMD_TEST_OTHER /t REG_SZ /d 'kept' /f >/dev/null 2>&1
[ "$(reg_value "$RVAR")" = 'C:\rocmd-wenv\state\tune-overrides\gone\rocblas.csv' ] &&
	ok "wine reg query shows the stale $RVAR" || bad "wine reg add / query of $RVAR"

check "doctor: the stale overrides are errors (exit 6)" 6 ctl doctor
sed 's/^/#   /' "$OUT"
contains "doctor names $RVAR, read from the registry key" "$OUT" \
	"$RVAR=C:.rocmd-wenv.state.tune-overrides.gone.rocblas.csv, in HKLM.SYSTEM.CurrentControlSet.Control.Session Manager.Environment, names no file"
contains "and $HVAR" "$OUT" "$HVAR=C:.rocmd-wenv.old.hipblaslt.txt, in HKLM.SYSTEM.*Environment, names no file"
contains "an error --fix can mend" "$OUT" "fix: run rocmd's override recovery (--fix does.*\[--fix applies it\]"
ctl --json doctor >"$OUT" 2>&1
contains "the evidence names the key" "$OUT" '"named_by":[[:space:]]*"HKLM\\\\SYSTEM\\\\CurrentControlSet\\\\Control\\\\Session Manager\\\\Environment"'

ctl doctor --fix >"$OUT" 2>&1
sed 's/^/#   /' "$OUT"
contains "doctor --fix runs the recovery" "$OUT" \
	"done: ran rocmd's override recovery: the machine's environment no longer names $RVAR"
[ -z "$(reg_value "$RVAR")" ] && ok "wine reg query: $RVAR deleted from the machine environment" ||
	bad "wine reg query: $RVAR deleted (it is '$(reg_value "$RVAR")')"
[ -z "$(reg_value "$HVAR")" ] && ok "wine reg query: $HVAR deleted" ||
	bad "wine reg query: $HVAR deleted (it is '$(reg_value "$HVAR")')"
[ "$(reg_value ROCMD_TEST_OTHER)" = kept ] && ok "another variable of the key is left alone" ||
	bad "another variable of the key is left alone"
ctl doctor >"$OUT" 2>&1
lacks "doctor: no tune-override finding after the fix" "$OUT" "tune-override"
wine reg delete "$ENVKEY" /v ROCMD_TEST_OTHER /f >/dev/null 2>&1

# A live override: one rocBLAS shape tuned on the stand-in, its winner beats
# the default, and the machine environment names the file.
RCSV=$T/state/tune-overrides/lib-rocblas-1/rocblas.csv
RWIN='C:\rocmd-wenv\state/tune-overrides/lib-rocblas-1/rocblas.csv'
echo './rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 256 -n 16 -k 256 --alpha 1 --a_type f16_r --lda 256 --b_type f16_r --ldb 256 --beta 0 --c_type f16_r --ldc 256 --d_type f16_r --ldd 256 --compute_type f32_r --algo 0 --solution_index 0 --flags 0' >"$T/bench.log"
check "tune import-log: one rocBLAS shape" 0 ctl tune import-log 'C:\rocmd-wenv\bench.log'
check "tune start" 0 ctl tune start
live() { [ "$(reg_value "$RVAR")" = "$RWIN" ]; }
wait_for "the override is live: wine reg query shows $RVAR=$RWIN" 120 live
ctl tune results >"$OUT" 2>&1
contains "tune results: live" "$OUT" "lib-rocblas-1 rocblas override: live, 1 entry"
contains "the file has its entry" "$RCSV" "^T,N,256,16,1,256,"
contains "its identity line names the DLL" "$RCSV" "^# rocmd override library=rocblas.dll sha256=[0-9a-f]\{64\} stat=[0-9a-f]\{16\} gpu=gfx1103 cus=12 "
wine cmd /c echo "%$RVAR%" 2>/dev/null | tr -d '\r' >"$OUT"
contains "a program started now has it in its environment" "$OUT" "^C:.rocmd-wenv.state/tune-overrides/lib-rocblas-1/rocblas.csv$"
ctl tune off lib-rocblas-1 >"$OUT" 2>&1
[ -z "$(reg_value "$RVAR")" ] && ok "tune off: $RVAR deleted from the registry" ||
	bad "tune off: $RVAR deleted from the registry"
ctl tune on lib-rocblas-1 >"$OUT" 2>&1
live && ok "tune on: $RVAR set again" || bad "tune on: $RVAR set again ('$(reg_value "$RVAR")')"
check "tune pause" 0 ctl tune pause

# The file removed by hand while the registry names it.
rm -f "$RCSV"
check "doctor: the live override's file is gone, an error (exit 6)" 6 ctl doctor
contains "named, in the registry key" "$OUT" "$RVAR=C:.rocmd-wenv.state/tune-overrides/lib-rocblas-1/rocblas.csv, in HKLM.SYSTEM.*Environment, names no file"
ctl doctor --fix >"$OUT" 2>&1
contains "doctor --fix writes it again" "$OUT" "done: ran rocmd's override recovery: lib-rocblas-1's rocblas override is live now (1 entry), and the machine's environment names it"
[ -f "$RCSV" ] && ok "the file is there again" || bad "the file is there again"
live && ok "wine reg query: $RVAR still names it" || bad "wine reg query: $RVAR still names it"

ctl shutdown >/dev/null 2>&1
wait $DAEMON
[ "$failed" -eq 0 ] || tr -d "\r" <"$T/console.out" | tail -n 20 | sed "s/^/#   console: /"
harness_done "windows machine environment"
