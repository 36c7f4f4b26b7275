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
# of another variable in the key is left alone.
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
	"tune": { "backend": "cpu", "check_ms": 500 }
}
JSON
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

ctl shutdown >/dev/null 2>&1
wait $DAEMON
harness_done "windows machine environment"
