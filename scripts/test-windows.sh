#!/bin/sh
# The Windows stage of CI: cross-builds rocmd.exe and rocmctl.exe with
# mingw-w64 (scripts/build-windows.sh; the dependencies are cached outside the
# repository) and runs them under wine64 in a fresh prefix:
#
#   1. console mode (not started by the SCM): serves the pipe, rocmctl works;
#   2. "sc create" + "sc start": the SCM runs rocmd.exe as a service,
#      rocmctl.exe status answers over \\.\pipe\rocmd, the service sees the
#      Windows-layout SDK tree made under C:\Program Files\AMD\ROCm\6.2,
#      imports a package and deploys it there;
#      "sc stop" stops it cleanly, "sc delete" removes it;
#   3. "rocmd install | start | stop | uninstall";
#   4. a process that creates \\.\pipe\rocmd first makes rocmd refuse to
#      start and say why (FILE_FLAG_FIRST_PIPE_INSTANCE);
#   5. SDK discovery (tests/windows/test-sdk-win.sh): Windows-layout SDKs
#      found, watched (one added, one removed while rocmd runs), the registry
#      and the machine environment read, the HIP probe run.
#   6. the deploy engine (tests/windows/test-wdep-win.sh): test-deploy.exe
#      in a wine prefix of its own: deploy / rollback / redeploy on a
#      Windows-layout target, faults at every file operation, a deploy over
#      a rocblas.dll held loaded (LoadLibrary).
#   7. the package store (tests/windows/test-wpkg-win.sh): real 7z, zip and
#      folder imports, list / show / match / verify / rm, hostile archives
#      (..\, C:\, C:x, streams, CON, NUL.txt, case) refused, the drop folder.
#   8. deploy (tests/windows/test-wlib-win.sh): packages imported, lib
#      deploy / status / verify / history / rollback on C:\Program Files\AMD\
#      ROCm\6.2, the files checked on disk, a process holding rocblas.dll
#      (refused, then deferred), the GEMM smoke test run as an .exe.
#   9. the tuner (tests/windows/test-tune-win.sh): rocmd.exe tunes on the CPU
#      backend, each candidate in an evaluation process (rocmd.exe again, in a
#      job object): tune add / start / results / pause, a crashing candidate
#      recorded, the tuned library written; rocmtune.exe run and a hang.
#  10. the installer (tests/windows/test-msi-win.sh, a prefix of its own):
#      scripts/build-msi.sh builds the MSI (wixl), the portable zip and
#      SHA256SUMS into build-win/dist (CI's artifacts); msiexec /i installs and
#      starts the service, an upgrade keeps the database, msiexec /x removes
#      the service and keeps %ProgramData%\rocmd.
#  11. package feeds (tests/windows/test-wfeed-win.sh): against a loopback
#      HTTPS server (tests/integration/feed-server.py), pkg refresh /
#      available / fetch through libcurl with Schannel and the Ed25519 check,
#      a resume after a cut connection, refusals of a bad signature, a wrong
#      hash, a truncated body and of a certificate not given as the CA bundle.
#  12. the HIP backend (tests/windows/test-hip-win.sh, a prefix of its own):
#      stand-in runtime and hiprtc DLLs in System32 and an SDK's bin: found by
#      name, the device reported, the compile child run, failures reported;
#      without a runtime the CPU backend tunes and the probe says why not hip.
#  13. the machine environment (tests/windows/test-wenv-win.sh): stale
#      override variables in HKLM's Session Manager\Environment (wine reg
#      add) named by rocmctl.exe doctor, deleted by doctor --fix (reg query);
#      a rocBLAS override tuned on the stand-in rocBLAS DLL made live there,
#      tune off / on, its file removed and doctor --fix writing it again.
#
# It skips, with the reason, only when mingw-w64 or wine cannot be installed.
# Usage: scripts/test-windows.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${ROCMD_WIN_BUILD:-$ROOT/build-win}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
. "$ROOT/tests/lib/harness.sh"
. "$ROOT/tests/lib/harness-wine.sh"
# The waits here count their tries (60, 0.5 s apart: "30 s" on an idle
# machine): the SCM's own 30 s limits on a first service start need the slack.
WAIT_CLOCK=
# Stages 5 on are scripts of their own (tests/windows/test-*-win.sh, each with
# its own wine prefix): their TAP lines join this script's counts, and one
# that ends badly without a "not ok" line counts as one failure of stage WHAT.
run_stage() {
	what=$1 secs=$2 script=$3
	timeout "$secs" "$ROOT/tests/windows/$script" "$BUILD" >"$DIR/stage" 2>&1
	stage_rc=$?
	stage_failed=$failed
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok - "*) passed=$((passed + 1)) ;;
		"not ok - "*) failed=$((failed + 1)) ;;
		esac
	done <"$DIR/stage"
	if [ "$stage_rc" -ne 0 ] && [ "$failed" -eq "$stage_failed" ]; then
		: >"$OUT"
		bad "the $what stage ended with status $stage_rc"
	fi
}

need=""
command -v x86_64-w64-mingw32-gcc-posix >/dev/null 2>&1 || need="$need mingw-w64"
command -v wine >/dev/null 2>&1 || need="$need wine wine64"
if [ -n "$need" ]; then
	echo "== installing$need"
	if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends $need >/dev/null; }; then
		echo "ok - Windows stage # skip cannot install$need (no apt access)"
		exit 0
	fi
fi

echo "== cross-build (scripts/build-windows.sh)"
"$ROOT/scripts/build-windows.sh" all || { echo "not ok - Windows cross-build"; exit 1; }
cmake --build "$BUILD" --target pipe-squatter fake-amdhip64 fake-amdhip64-crash \
	fake-amdhip64-hang fake-rocblas rocmd-rocblas-smoke >/dev/null ||
	{ echo "not ok - test helpers build"; exit 1; }

echo "== wine prefix"
# A fresh one, whatever WINEPREFIX says; the stage scripts are given it.
unset WINEPREFIX
win_prefix win rocmd
# The commands' output is kept outside the prefix, apart from what Windows processes see.
OUT=$DIR/out
LOG=$T/rocmd.log
cp "$BUILD/daemon/rocmd.exe" "$BUILD/daemon/rocmd-rocblas-smoke.exe" "$BUILD/client/rocmctl.exe" \
	"$BUILD/tests/windows/pipe-squatter.exe" "$C/rocmd/"
# A Windows-layout HIP SDK 6.2 with a rocBLAS library folder (stand-in files;
# the HIP runtime is tests/windows/fake-amdhip64.c: no GPU).
SDK="$C/Program Files/AMD/ROCm/6.2"
mkdir -p "$SDK/bin/rocblas/library"
printf 'MZ stand-in\n' >"$SDK/bin/rocblas.dll"
cp "$BUILD/tests/windows/amdhip64_6.dll" "$SDK/bin/amdhip64_6.dll"
printf 'MZ stand-in\n' >"$SDK/bin/hiprtc0602.dll"
printf 'stand-in\n' >"$SDK/bin/rocblas/library/TensileLibrary_lazy_gfx1103.dat"
# A package as people download them: rocblas.dll (a real PE) and a library folder.
PKG="$C/rocmd/pkg/rocm.gfx1103.for.hip.sdk.6.2.4"
mkdir -p "$PKG/library"
cp "$BUILD/tests/windows/rocblas.dll" "$PKG/rocblas.dll"
printf 'tuned stand-in\n' >"$PKG/library/TensileLibrary_lazy_gfx1103.dat"
printf 'tuned stand-in\n' >"$PKG/library/TensileLibrary_gfx1103.co"
cat >"$C/rocmd/rocmd.json" <<'EOF'
{
	"state_dir": "C:\\rocmd\\state",
	"log": { "level": "info", "file": "C:\\rocmd\\rocmd.log" },
	"sdk": { "extra_roots": "C:\\Program Files\\AMD\\ROCm\\6.2" }
}
EOF
ROCMD='C:\rocmd\rocmd.exe'
CONF='C:\rocmd\rocmd.json'

sc_state() { wine sc query rocmd 2>/dev/null | tr -d '\r' | sed -n 's/.*STATE *: *[0-9]* *\([A-Z_]*\).*/\1/p'; }
is_state() { [ "$(sc_state)" = "$1" ]; }
settled() {
	st=$(sc_state)
	[ "$st" != START_PENDING ] && [ "$st" != STOP_PENDING ]
}
# sc_start: "sc start rocmd" until the SCM reports that the process ran. The
# first service start in a fresh wine prefix can time out (1053) while wine
# sets up the services' window station; a start that never ran (1077) is retried.
sc_start() {
	for try in 1 2 3; do
		wine sc start rocmd >/dev/null 2>&1
		wait_until 30 settled
		wine sc query rocmd 2>&1 | tr -d '\r' >"$DIR/query"
		grep -q "WIN32_EXIT_CODE *: *1077" "$DIR/query" || return 0
		echo "# sc start: the service process never ran (try $try); retrying"
	done
}

# Wine's services.exe shuts down (and stops every service) once no ordinary
# process is left: a keep-alive process stands in for the logged-in user.
wine 'C:\rocmd\pipe-squatter.exe' '\\.\pipe\rocmd-test-keepalive' 'C:\rocmd\stop-keepalive' \
	>/dev/null 2>&1 &
KEEPALIVE=$!

echo "== 1. console mode"
wine "$ROCMD" --foreground --config "$CONF" >"$DIR/console.out" 2>&1 &
CONSOLE=$!
if wait_until 30 wine "$CTL" status; then ok "console rocmd.exe serves \\\\.\\pipe\\rocmd; rocmctl.exe status"; else
	bad "console mode: rocmctl.exe status"
fi
if wine "$CTL" --json status >"$OUT" 2>&1 && grep -q '"state_dir"' "$OUT"; then
	ok "rocmctl.exe --json status"
else
	bad "rocmctl.exe --json status"
fi
if wine "$CTL" shutdown >"$OUT" 2>&1; then ok "rocmctl.exe shutdown (wine's user is an Administrator)"; else
	bad "rocmctl.exe shutdown"
fi
wait $CONSOLE
rc=$?
if [ $rc -eq 0 ]; then ok "console rocmd.exe exits 0 after shutdown"; else
	cp "$DIR/console.out" "$OUT"
	bad "console rocmd.exe exit status $rc"
fi

echo "== 2. the SCM: sc create / start / stop / delete"
# A start that fails (an unknown key in the configuration: exit code 3) ends in
# SERVICE_STOPPED with ERROR_SERVICE_SPECIFIC_ERROR (1066) and the code.
printf '{ "no_such_key": 1 }\n' >"$C/rocmd/bad.json"
wine sc create rocmd binPath= "$ROCMD --foreground --config C:\rocmd\bad.json" start= demand >/dev/null 2>&1
sc_start
cp "$DIR/query" "$OUT"
if grep -q "WIN32_EXIT_CODE *: *1066" "$OUT" && grep -q "SERVICE_EXIT_CODE *: *3 " "$OUT"; then
	ok "a failed start: SERVICE_STOPPED, ERROR_SERVICE_SPECIFIC_ERROR, service exit code 3"
else
	bad "a failed start's service status"
fi
wine sc delete rocmd >/dev/null 2>&1
if wine sc create rocmd binPath= "$ROCMD --foreground --config $CONF" start= demand >"$OUT" 2>&1; then
	ok "sc create rocmd"
else
	bad "sc create rocmd"
fi
sc_start
if wait_until 30 is_state RUNNING; then ok "sc start rocmd: RUNNING (ServiceMain reported SERVICE_RUNNING)"; else
	wine sc query rocmd >"$OUT" 2>&1
	bad "sc start rocmd"
fi
if wait_until 30 wine "$CTL" status && grep -q "rocmd" "$OUT"; then
	ok "rocmctl.exe status over the pipe, daemon run by the SCM"
	sed 's/^/#   /' "$OUT"
else
	bad "rocmctl.exe status against the service"
fi
if wine "$CTL" --json config >"$OUT" 2>&1 && grep -q 'ROCm\\\\6.2' "$OUT"; then
	ok "the service read its configuration and the SDK root C:\\Program Files\\AMD\\ROCm\\6.2"
else
	bad "the service's configuration names the SDK tree"
fi
# The service's SDK discovery sees the tree (stage 5 tests discovery itself).
svc_lists_sdk() {
	wine "$CTL" sdk list >"$DIR/sdk" 2>&1
	tr -d '\r' <"$DIR/sdk" | grep -q 'ROCm\\6.2 .* 6.2 .* present'
}
if wait_until 30 svc_lists_sdk; then
	ok "the service lists the SDK C:\\Program Files\\AMD\\ROCm\\6.2 (rocmctl.exe sdk list)"
	tr -d '\r' <"$DIR/sdk" | sed 's/^/#   /'
else
	cp "$DIR/sdk" "$OUT"
	bad "the service's sdk list"
fi
# Deploy through the service (stage 8 tests deploy in depth): the package
# imported into the service's store, deployed into ...\ROCm\6.2\bin.
if wine "$CTL" pkg import 'C:\rocmd\pkg\rocm.gfx1103.for.hip.sdk.6.2.4' >"$OUT" 2>&1; then
	ok "the service imports a package (rocmctl.exe pkg import)"
else
	bad "pkg import through the service"
fi
if wine "$CTL" lib deploy 'C:\Program Files\AMD\ROCm\6.2' --package 1 >"$OUT" 2>&1 &&
	cmp -s "$SDK/bin/rocblas.dll" "$PKG/rocblas.dll" &&
	cmp -s "$SDK/bin/rocblas/library/TensileLibrary_gfx1103.co" "$PKG/library/TensileLibrary_gfx1103.co" &&
	grep -q 'MZ stand-in' "$SDK/bin/rocblas_backup.dll"; then
	ok "the service deploys it into C:\Program Files\AMD\ROCm\6.2\bin (rocblas.dll and rocblas\library replaced, rocblas_backup.dll kept)"
	tr -d '\r' <"$OUT" | sed 's/^/#   /'
else
	bad "lib deploy through the service"
fi
wine sc stop rocmd >"$OUT" 2>&1
if wait_until 30 is_state STOPPED; then ok "sc stop rocmd: STOPPED"; else
	wine sc query rocmd >"$OUT" 2>&1
	bad "sc stop rocmd"
fi
if grep -q "shutting down: service stop requested" "$LOG" && grep -q "stopped" "$LOG"; then
	ok "the stop control reached the loop (uv_async_send) and rocmd shut down gracefully"
else
	: >"$OUT"
	bad "graceful stop in the log"
fi
if wine sc delete rocmd >"$OUT" 2>&1 && ! wine sc query rocmd >/dev/null 2>&1; then
	ok "sc delete rocmd"
else
	bad "sc delete rocmd"
fi

echo "== 3. rocmd install / start / stop / uninstall"
if wine "$ROCMD" install >"$OUT" 2>&1; then ok "rocmd.exe install"; else bad "rocmd.exe install"; fi
sed 's/^/#   /' "$OUT"
# The installed service uses the default config (%ProgramData%\rocmd\rocmd.json).
mkdir -p "$C/ProgramData/rocmd"
cp "$C/rocmd/rocmd.json" "$C/ProgramData/rocmd/rocmd.json"
if wine "$ROCMD" start >"$OUT" 2>&1 && wait_until 30 wine "$CTL" status; then
	ok "rocmd.exe start; rocmctl.exe status"
else
	bad "rocmd.exe start"
fi
if wine "$ROCMD" stop >"$OUT" 2>&1 && is_state STOPPED; then ok "rocmd.exe stop"; else bad "rocmd.exe stop"; fi
if wine "$ROCMD" uninstall >"$OUT" 2>&1 && ! wine sc query rocmd >/dev/null 2>&1; then
	ok "rocmd.exe uninstall"
else
	bad "rocmd.exe uninstall"
fi

echo "== 4. a squatter on the pipe name"
wine 'C:\rocmd\pipe-squatter.exe' '\\.\pipe\rocmd' 'C:\rocmd\stop-squatting' >"$DIR/squat.out" 2>&1 &
SQUAT=$!
wait_until 30 grep -q squatting "$DIR/squat.out"
wine "$ROCMD" --foreground --config "$CONF" >"$OUT" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "already exists: another process" "$OUT"; then
	ok "rocmd refuses to start when another process created the pipe first (exit $rc)"
	grep "already exists" "$OUT" | tr -d '\r' | sed 's/^/#   /'
else
	bad "rocmd with a squatter on the pipe (exit $rc)"
fi
touch "$C/rocmd/stop-squatting"
wait $SQUAT

echo "== 5. SDK discovery (tests/windows/test-sdk-win.sh)"
run_stage "SDK discovery" 300 test-sdk-win.sh

echo "== 6. the deploy engine (tests/windows/test-wdep-win.sh)"
if cmake --build "$BUILD" --target test-deploy-win fake-rocblas >"$OUT" 2>&1; then
	run_stage "deploy engine" 1800 test-wdep-win.sh
else
	bad "test-deploy.exe builds (it needs cmocka: scripts/build-windows.sh deps)"
fi

echo "== 7. the package store (tests/windows/test-wpkg-win.sh)"
run_stage "package store" 900 test-wpkg-win.sh

echo "== 8. deploy (tests/windows/test-wlib-win.sh)"
if cmake --build "$BUILD" --target rocmd-rocblas-smoke dll-holder run-restricted fake-hip-gpu fake-rocblas-gemm \
	fake-rocblas-wrong fake-amdhip64-crash >"$OUT" 2>&1; then
	run_stage "deploy" 1200 test-wlib-win.sh
else
	bad "the deploy stage's helpers build"
fi

echo "== 9. the tuner (tests/windows/test-tune-win.sh)"
if cmake --build "$BUILD" --target rocmtune rocmd-idle-agent win-standin-rocblas planted >"$OUT" 2>&1; then
	run_stage "tuner" 900 test-tune-win.sh
else
	bad "rocmtune.exe builds"
fi

echo "== 10. the installer (tests/windows/test-msi-win.sh)"
if cmake --build "$BUILD" --target rocmd rocmctl rocmtune rocmd-hip-probe rocmd-rocblas-smoke rocmd-idle-agent \
	pipe-squatter fake-amdhip64-780m >"$OUT" 2>&1; then
	run_stage "installer" 600 test-msi-win.sh
else
	bad "the installer's executables build"
fi

echo "== 11. package feeds (tests/windows/test-wfeed-win.sh)"
run_stage "package feeds" 600 test-wfeed-win.sh
echo "== 12. the HIP backend (tests/windows/test-hip-win.sh)"
run_stage "HIP backend" 600 test-hip-win.sh
echo "== 13. the machine environment (tests/windows/test-wenv-win.sh)"
if cmake --build "$BUILD" --target win-standin-rocblas >"$OUT" 2>&1; then
	run_stage "machine environment" 300 test-wenv-win.sh
else
	bad "the vendor stand-in DLLs build"
fi

touch "$C/rocmd/stop-keepalive"
wait $KEEPALIVE
harness_done "windows stage"
