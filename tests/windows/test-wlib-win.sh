#!/bin/sh
# Deploy on Windows, end to end under wine: the real rocmd.exe (console mode)
# and rocmctl.exe over \\.\pipe\rocmd, on a Windows-layout HIP SDK 6.2 made
# where the installer puts it:
#   C:\Program Files\AMD\ROCm\6.2\bin\amdhip64_6.dll (fake-amdhip64.c: a real
#   DLL that reports no GPU, as AMD's runtime does without one), bin\rocblas.dll
#   (fake-rocblas.c), bin\rocblas\library\ with Debian trixie's real rocBLAS
#   files (TensileLibrary.dat, TensileLibrary_gfx803.co,
#   Kernels.so-000-gfx803.hsaco; stand-ins when the SDK test cache lacks them).
# Packages (folders: a rocblas.dll and library\) are imported into the store
# with rocmctl.exe pkg import, then:
#   - lib deploy: bin\rocblas.dll and bin\rocblas\library replaced (the folder
#     as a whole), the originals kept under rocmd's state and as
#     bin\rocblas_backup.dll + bin\rocblas_backup\, no leftovers; the GEMM
#     smoke test (rocmd-rocblas-smoke.exe, run through spawn-win.c) loads the
#     SDK's amdhip64_6.dll and reports no GPU, which is recorded as skipped;
#   - lib status, lib verify (hashes, pairing), lib history;
#   - a process holding bin\rocblas.dll (dll-holder.exe): a deploy is refused
#     (deploy.gpu_busy refuse) naming it, then deferred (defer) until it lets go;
#   - a package with fewer files replaces the folder with no stale file left;
#   - lib rollback --to previous, then --to original: byte for byte;
#   - with a HIP runtime that reports a GPU (tests/fixtures/fake-hip.c built as a
#     DLL: host memory) the smoke test really runs on Windows: a rocBLAS whose
#     GEMM is wrong is caught and the deploy rolled back, so is a runtime that
#     crashes (exception 0xC0000005), and a right one passes;
#   - a file inside the library held open (dll-holder.exe --open): the
#     deploy (Windows) or its cleanup (wine) is tried again until it closes;
#   - a user who is not an Administrator (run-restricted.exe) may not verify
#     (a skip under wine, which cannot tell rocmd the client's token).
# Usage: test-wlib-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
BUILD=$1
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
RL=$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
for f in daemon/rocmd.exe daemon/rocmd-hip-probe.exe daemon/rocmd-rocblas-smoke.exe \
	client/rocmctl.exe tests/windows/dll-holder.exe tests/windows/run-restricted.exe \
	tests/windows/amdhip64_6.dll \
	tests/windows/rocblas.dll tests/windows/amdhip64_gpu.dll tests/windows/rocblas_gemm.dll \
	tests/windows/rocblas_wrong.dll tests/windows/amdhip64_crash.dll; do
	[ -f "$BUILD/$f" ] || { echo "not ok - $BUILD/$f is missing (build it first)"; exit 1; }
done
win_prefix wlib rocmd-lib
ROCM="$C/Program Files/AMD/ROCm"
B="$ROCM/6.2/bin"
SDKW='C:\Program Files\AMD\ROCm\6.2'
ENVKEY='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'

# deploy_ended FILE PKG OK-NAME BAD-NAME: waits for the background deploy
# $DEPLOY, whose output went to FILE, and checks that it deployed package PKG.
deploy_ended() {
	wait "$DEPLOY"
	rc=$?
	tr -d '\r' <"$1" >"$OUT"
	if [ $rc -eq 0 ] && grep -q "Deployed package #$2" "$OUT"; then ok "$3"; else
		bad "$4 (exit $rc)"
	fi
}
no_leftovers() { # nothing of ours left beside the target: stage, old tree, new binary
	ls -a "$B" "$B/rocblas" >"$OUT" 2>&1
	! grep -q '^\.rocmd-' "$OUT"
}
DAEMON=""
start_rocmd() { # start_rocmd CONFIG-NAME
	wine 'C:\rocmd-lib\rocmd.exe' --foreground --config "C:\\rocmd-lib\\$1" \
		>"$T/console.out" 2>&1 &
	DAEMON=$!
	wait_for "rocmd.exe started ($1)" 60 ctl status && return 0
	# Nothing after this can pass: say so once, not forty times.
	tr -d '\r' <"$T/console.out" | tail -n 5 | sed 's/^/#   console: /'
	echo "# windows deploy: $passed passed, $failed failed (stopped: rocmd.exe did not start)"
	exit 1
}
stop_rocmd() {
	ctl shutdown >/dev/null
	wait "$DAEMON"
}
HOLDER=""
hold() { # hold: dll-holder.exe keeps bin\rocblas.dll loaded until stop-holder exists
	rm -f "$T/stop-holder"
	wine 'C:\rocmd-lib\dll-holder.exe' "$SDKW\\bin\\rocblas.dll" 'C:\rocmd-lib\stop-holder' \
		>"$T/holder.out" 2>&1 &
	HOLDER=$!
	wait_for "dll-holder.exe holds bin\\rocblas.dll" 30 grep -q holding "$T/holder.out"
}
release() {
	touch "$T/stop-holder"
	wait "$HOLDER"
}

# The SDK: only 6.2 (the stages before this one leave other SDKs and variables).
rm -rf "$ROCM" "$C/HIP-Jürgen"
LC_ALL=C.UTF-8 wine reg delete "$ENVKEY" /v HIP_PATH_61 /f >/dev/null 2>&1
wine reg add 'HKLM\Software\AMD\ROCm\6.2' /v InstallDir /t REG_SZ /d "$SDKW\\" /f >/dev/null 2>&1
wine reg add "$ENVKEY" /v HIP_PATH /t REG_SZ /d "$SDKW\\" /f >/dev/null 2>&1
wine reg add "$ENVKEY" /v HIP_PATH_62 /t REG_SZ /d "$SDKW\\" /f >/dev/null 2>&1
mkdir -p "$B/rocblas/library"
printf 'HIP_VERSION_MAJOR=6\r\nHIP_VERSION_MINOR=2\r\nHIP_VERSION_PATCH=41134\r\n' >"$B/.hipVersion"
cp "$BUILD/tests/windows/amdhip64_6.dll" "$B/amdhip64_6.dll"
cp "$BUILD/tests/windows/rocblas.dll" "$B/rocblas.dll"
cp "$BUILD/tests/windows/rocblas.dll" "$B/hiprtc0602.dll"
if [ -f "$RL/TensileLibrary.dat" ]; then
	REAL=1
	cp "$RL/TensileLibrary.dat" "$RL/TensileLibrary_gfx803.co" "$RL/Kernels.so-000-gfx803.hsaco" \
		"$B/rocblas/library/"
else
	REAL=0
	echo "# note: no real rocBLAS files in $TREES (tests/fixtures/make-trees.sh): stand-ins used"
	printf 'index\n' >"$B/rocblas/library/TensileLibrary.dat"
	printf 'co\n' >"$B/rocblas/library/TensileLibrary_gfx803.co"
	printf 'hsaco\n' >"$B/rocblas/library/Kernels.so-000-gfx803.hsaco"
fi
cp -r "$B" "$T/bin-original"

# Three packages, as people download them (a rocblas.dll and a library folder).
mkpkg() { # mkpkg NAME DLL FILES...: a package folder under $T/pkg
	p=$T/pkg/$1 dll=$2
	shift 2
	mkdir -p "$p/library"
	cp "$BUILD/tests/windows/$dll" "$p/rocblas.dll"
	for f in "$@"; do
		if [ $REAL -eq 1 ]; then cp "$RL/$f" "$p/library/"; else printf '%s\n' "$f" >"$p/library/$f"; fi
	done
}
P1=rocm.gfx1030.V5.0.for.hip.sdk.6.2.4
P2=rocm.gfx1030.V5.1.for.hip.sdk.6.2.4
P3=rocm.gfx1030.V5.2-wrong.for.hip.sdk.6.2.4
mkpkg $P1 rocblas_gemm.dll TensileLibrary.dat Kernels.so-000-gfx1030.hsaco
mkpkg $P2 rocblas_gemm.dll TensileLibrary.dat Kernels.so-000-gfx1030.hsaco TensileLibrary_gfx803.co
mkpkg $P3 rocblas_wrong.dll TensileLibrary.dat Kernels.so-000-gfx1030.hsaco

cp "$BUILD/daemon/rocmd.exe" "$BUILD/daemon/rocmd-hip-probe.exe" "$BUILD/daemon/rocmd-rocblas-smoke.exe" \
	"$BUILD/client/rocmctl.exe" "$BUILD/tests/windows/dll-holder.exe" \
	"$BUILD/tests/windows/run-restricted.exe" "$T/"
for policy in refuse defer; do
	cat >"$T/$policy.json" <<JSON
{
	"state_dir": "C:\\\\rocmd-lib\\\\state",
	"log": { "level": "info", "file": "C:\\\\rocmd-lib\\\\rocmd.log" },
	"sdk": { "debounce_ms": 500, "probe_timeout_ms": 20000 },
	"deploy": { "sync": "off", "gpu_busy": "$policy", "defer_retry_s": 1, "smoke_timeout_ms": 60000 }
}
JSON
done

start=$(date +%s)
printf '%s\n' "# 8a. deploy, status, verify, history"
# The first deploy's swap meets a busy target once (EBUSY, as a file in use
# is): the try after it finds the backup the first one made, and the deploy
# still says it backed up the originals.
ROCMD_FAILPOINT=deploy.exchange:1:EBUSY
export ROCMD_FAILPOINT
start_rocmd refuse.json
unset ROCMD_FAILPOINT
wait_for "the SDK $SDKW is found and inspected" 90 has_event sdk.library_inspected 'ROCm\\6.2'
n=0
for p in $P1 $P2 $P3; do
	n=$((n + 1))
	check "pkg import $p (package $n)" 0 ctl --json pkg import "C:\\rocmd-lib\\pkg\\$p"
done
ctl --json pkg show 1 >"$OUT"
contains "package 1 is a Windows package (rocblas.dll)" "$OUT" '"platform":[[:space:]]*"windows"'

check "lib status" 0 ctl --json lib status
contains "the target is bin\\rocblas\\library of the SDK" "$OUT" '"library":[[:space:]]*"C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2\\\\bin\\\\rocblas\\\\library"'
contains "and bin\\rocblas.dll" "$OUT" '"binary":[[:space:]]*"C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2\\\\bin\\\\rocblas.dll"'
TARGET=$(sed -n 's/.*"name":[[:space:]]*"\(sdk-[0-9]*\)".*/\1/p' "$OUT" | head -n1)
[ -n "$TARGET" ] || TARGET=sdk-1

check "lib deploy $SDKW --package 1" 0 ctl lib deploy "$SDKW" --package 1
tr -d '\r' <"$OUT" | sed 's/^/#   /'
contains "the originals were backed up" "$OUT" "The originals were backed up"
contains "after a busy swap was tried again" "$T/console.out" "trying again in 2 s (1 of 5)"
contains "the GEMM smoke test ran rocmd-rocblas-smoke.exe: no GPU under wine, recorded as skipped" "$OUT" \
	"GEMM smoke test: skipped: no GPU/runtime: the HIP runtime sees no GPU (hipGetDeviceCount: error 100"
same "bin\\rocblas\\library is the package's library, as a whole" "$T/pkg/$P1/library" "$B/rocblas/library"
if cmp -s "$T/pkg/$P1/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll is the package's"; else
	bad "bin\\rocblas.dll is the package's"; fi
if cmp -s "$T/bin-original/rocblas.dll" "$B/rocblas_backup.dll"; then
	ok "the original DLL is kept as bin\\rocblas_backup.dll"
else
	ls -la "$B" >"$OUT"
	bad "the original DLL is kept as bin\\rocblas_backup.dll"
fi
same "the original library is kept as bin\\rocblas_backup\\library" "$T/bin-original/rocblas/library" \
	"$B/rocblas_backup/library"
if [ -f "$T/state/deploy/$TARGET/backup/manifest.json" ] && cmp -s "$T/bin-original/rocblas.dll" \
	"$T/state/deploy/$TARGET/backup/binary"; then
	ok "and under %ProgramData%-style state: state\\deploy\\$TARGET\\backup (manifest, binary)"
else
	ls -laR "$T/state/deploy" >"$OUT" 2>&1
	bad "the backup under the state folder"
fi
if no_leftovers; then ok "no stage, old tree or new binary left beside the target"; else
	bad "leftovers beside the target"; fi

check "lib status after the deploy" 0 ctl --json lib status
contains "it holds package 1" "$OUT" '"package":[[:space:]]*1'
contains "with the backup of the originals" "$OUT" '"backup":'
check "lib verify" 0 ctl lib verify "$SDKW"
tr -d '\r' <"$OUT" | sed 's/^/#   /'
contains "every file matches" "$OUT" "verified: [0-9]* files match"
contains "binary and library come from one package" "$OUT" "same package: yes"
contains "verify's smoke test: no GPU, recorded as skipped" "$OUT" "GEMM smoke test: skipped: no GPU/runtime"
check "lib history" 0 ctl lib history "$SDKW"
tr -d '\r' <"$OUT" | sed 's/^/#   /'
for a in "deploy *ok" "backup *ok" "verify *ok"; do
	contains "history: $a" "$OUT" "$a"
done

# A user who is not an Administrator (run-restricted.exe: Administrators
# deny-only, as UAC gives a non-elevated admin) may read but not verify.
wine 'C:\rocmd-lib\run-restricted.exe' "$CTL" lib verify "$SDKW" >"$T/ctl.raw" 2>&1
rc=$?
tr -d '\r' <"$T/ctl.raw" >"$OUT"
if [ $rc -eq 4 ]; then
	ok "a non-admin's lib verify is refused (exit 4)"
elif [ $rc -eq 0 ] && grep -q "restricted token: Administrators deny-only" "$OUT"; then
	# Wine's FSCTL_PIPE_IMPERSONATE impersonates the server itself ("FIXME:
	# impersonating self"): rocmd reads its own token, not the client's.
	ok "a non-admin's lib verify is refused # skip wine: the client's restricted token is real (deny-only, passed to the child), but ImpersonateNamedPipeClient impersonates rocmd itself"
else
	bad "a non-admin's lib verify (exit $rc)"
fi

printf '%s\n' "# 8b. a process holds bin\\rocblas.dll"
hold
check "deploy.gpu_busy refuse: the deploy is refused" 1 ctl lib deploy "$SDKW" --package 2
contains "the refusal names dll-holder.exe" "$ERR" "dll-holder.exe"
show "$ERR"
same "a refused deploy changes nothing" "$T/pkg/$P1/library" "$B/rocblas/library"
release
stop_rocmd
start_rocmd defer.json
hold
wine "$CTL" lib deploy "$SDKW" --package 2 >"$T/deferred.out" 2>&1 &
DEPLOY=$!
wait_for "deploy.gpu_busy defer: the deploy waits, naming dll-holder.exe" 60 \
	has_event lib.deferred "dll-holder.exe"
same "nothing changed while it waits" "$T/pkg/$P1/library" "$B/rocblas/library"
release
deploy_ended "$T/deferred.out" 2 "once dll-holder.exe let go, the deferred deploy ran" \
	"the deferred deploy"
same "bin\\rocblas\\library is package 2's (one file more)" "$T/pkg/$P2/library" "$B/rocblas/library"

printf '%s\n' "# 8c. rollback"
check "lib rollback --to previous" 0 ctl lib rollback "$SDKW" --to previous
contains "back to package 1" "$OUT" "previous package #1"
same "package 1's library, the extra file gone (no stale file)" "$T/pkg/$P1/library" "$B/rocblas/library"
check "lib rollback --to original" 0 ctl lib rollback "$SDKW" --to original
same "bin\\rocblas\\library is the original, byte for byte" "$T/bin-original/rocblas/library" \
	"$B/rocblas/library"
if cmp -s "$T/bin-original/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll is the original"; else
	bad "bin\\rocblas.dll is the original"; fi
if no_leftovers; then ok "no leftovers after the rollbacks"; else bad "leftovers after the rollbacks"; fi
check "lib status: nothing deployed" 0 ctl --json lib status
contains "the target holds the originals" "$OUT" '"deployed":[[:space:]]*null'

printf '%s\n' "# 8d. the GEMM smoke test with a runtime that reports a GPU"
cp "$BUILD/tests/windows/amdhip64_gpu.dll" "$B/amdhip64_6.dll"
check "a rocBLAS whose GEMM is wrong: the deploy is refused" 1 ctl lib deploy "$SDKW" --package 3
contains "the smoke test says the GEMM was wrong" "$ERR" "GEMM smoke test failed: sgemm result wrong"
same "and the library is back as it was" "$T/bin-original/rocblas/library" "$B/rocblas/library"
if cmp -s "$T/bin-original/rocblas.dll" "$B/rocblas.dll"; then ok "and so is bin\\rocblas.dll"; else
	bad "and so is bin\\rocblas.dll"; fi
# A HIP runtime that crashes (an access violation in hipGetDeviceCount).
cp "$BUILD/tests/windows/amdhip64_crash.dll" "$B/amdhip64_6.dll"
check "a runtime that crashes the smoke test: the deploy is refused" 1 ctl lib deploy "$SDKW" --package 1
contains "the crash is named" "$ERR" "GEMM smoke test failed: the GEMM smoke test died (exception 0xC0000005)"
same "and the library is back as it was" "$T/bin-original/rocblas/library" "$B/rocblas/library"
cp "$BUILD/tests/windows/amdhip64_gpu.dll" "$B/amdhip64_6.dll"
check "a rocBLAS whose GEMM is right: deployed" 0 ctl lib deploy "$SDKW" --package 1
contains "the smoke test ran on Windows and passed" "$OUT" "GEMM smoke test: ok: sgemm max_rel_err="
check "lib rollback --to original" 0 ctl lib rollback "$SDKW" --to original
same "the original library again" "$T/bin-original/rocblas/library" "$B/rocblas/library"

printf '%s\n' "# 8e. a file inside the library held open (an indexer, a virus scanner)"
# Windows refuses to rename a folder while a file inside it is open: the deploy
# fails with the target as it was and is tried again every 2 s. Wine renames
# the folder but cannot delete the open file from the old tree at commit: the
# deploy is in place and its cleanup (recovery) is tried again every 2 s. The
# file is closed once either shows in the log, and the next try goes through.
tries_before=$(grep -c 'trying again in 2 s' "$T/rocmd.log")
rm -f "$T/stop-opener"
wine 'C:\rocmd-lib\dll-holder.exe' --open "$SDKW\\bin\\rocblas\\library\\TensileLibrary.dat" \
	'C:\rocmd-lib\stop-opener' >"$T/opener.out" 2>&1 &
OPENER=$!
wait_for "dll-holder.exe --open holds bin\\rocblas\\library\\TensileLibrary.dat" 30 \
	grep -q holding "$T/opener.out"
wine "$CTL" lib deploy "$SDKW" --package 1 >"$T/retried.out" 2>&1 &
DEPLOY=$!
retried() { [ "$(grep -c 'trying again in 2 s' "$T/rocmd.log")" -gt "$tries_before" ]; }
if wait_for "the deploy meets the open file and is tried again" 120 retried; then
	grep 'trying again in 2 s' "$T/rocmd.log" | tail -n 1 | tr -d '\r' | sed 's/^/#   /'
fi
touch "$T/stop-opener"
wait "$OPENER"
deploy_ended "$T/retried.out" 1 "once the file is closed, the deploy goes through" \
	"the retried deploy"
same "package 1's library is in place" "$T/pkg/$P1/library" "$B/rocblas/library"
if no_leftovers; then ok "no leftovers after the retries"; else bad "leftovers after the retries"; fi
check "lib rollback --to original" 0 ctl lib rollback "$SDKW" --to original
same "the original library again" "$T/bin-original/rocblas/library" "$B/rocblas/library"
cp "$T/bin-original/amdhip64_6.dll" "$B/amdhip64_6.dll"

stop_rocmd
# A deploy right after another meets rocmd's own quiet rescan reading the
# library: on Windows the folder cannot be renamed meanwhile, and the deploy
# is tried again (deploy-jobs-os.h).
echo "# deploys tried again while the target was in use: $(grep -c 'trying again in 2 s' "$T/rocmd.log")"
echo "# deploy under wine: $(($(date +%s) - start)) s"
harness_done "windows deploy"
