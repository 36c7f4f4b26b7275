#!/bin/sh
# The deploy engine on Windows, under wine: tests/deploy/test-deploy.c
# cross-built as test-deploy.exe (cmocka from scripts/build-windows.sh's
# cache) and run in a wine prefix of its own. Its trees are made under the
# prefix's %TEMP% (C:\users\...\Temp), so every path goes through the engine's
# Windows file layer (common/fs-win.c: wide-character \\?\ paths,
# reparse points never followed, MoveFileExW, FlushFileBuffers):
#   deploy -> rollback to the original -> redeploy on a Windows-layout target
#   (bin\rocblas.dll + bin\rocblas\library, windows = 1) and on a Linux-shaped
#   one, byte for byte; stale files; a failing check rolled back; verify;
#   unsafe paths refused (a symlink in a package is refused on Windows);
#   manual rocblas_backup names written and adopted; new originals after an
#   SDK update; EIO, ENOSPC and EACCES at every file operation, then
#   recovery; SIGKILL-like ends (_exit at a kill point, in a child started
#   again from the test) at every kill point of a first and a second deploy
#   to a Windows-shaped target, recovery killed too; and test_loaded_dll: a
#   real rocblas.dll (fake-rocblas.c) loaded with LoadLibrary while deploys
#   and a rollback replace it.
# The test prints why it skips what it skips.
# Each cmocka result becomes one TAP line.
#
# Usage: test-wdep-win.sh BUILD-DIR     (a mingw-w64 build folder holding
#        tests/windows/test-deploy.exe and rocblas.dll)
set -u
BUILD=$1
passed=0
failed=0
skipped=0
EXE=$BUILD/tests/windows/test-deploy.exe
DLL=$BUILD/tests/windows/rocblas.dll
if [ ! -f "$EXE" ] || [ ! -f "$DLL" ]; then
	echo "not ok - test-deploy.exe and rocblas.dll are built in $BUILD/tests/windows"
	exit 1
fi
WORK=$(mktemp -d /tmp/rocmd-test-wdep-XXXXXX)
export WINEPREFIX="$WORK/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
cleanup() {
	wineserver -k >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
wineboot -i >/dev/null 2>&1
wineserver -w
T=$WINEPREFIX/drive_c/rocmd-wdep
mkdir -p "$T"
cp "$EXE" "$DLL" "$T/"
export ROCMD_TEST_DLL='C:\rocmd-wdep\rocblas.dll'
# No time limit of our own: the caller's (test-windows.sh) applies.
wine 'C:\rocmd-wdep\test-deploy.exe' "${ROCMD_TEST_FILTER:-*}" >"$WORK/out" 2>&1
rc=$?
tr -d '\r' <"$WORK/out" >"$WORK/log"
summary=0
while IFS= read -r line; do
	# After "[==========] N test(s) run." cmocka lists the skips and failures again.
	case $line in
	"[==========] "*" run."*) summary=1 ;;
	esac
	[ $summary -eq 1 ] && continue
	case $line in
	"[       OK ] "*)
		passed=$((passed + 1))
		printf 'ok - deploy engine: %s\n' "${line#\[       OK \] }"
		;;
	"[  SKIPPED ] "*)
		skipped=$((skipped + 1))
		printf 'ok - deploy engine: %s # skip (reason printed above)\n' "${line#\[  SKIPPED \] }"
		;;
	"[  FAILED  ] "*)
		failed=$((failed + 1))
		printf 'not ok - deploy engine: %s\n' "${line#\[  FAILED  \] }"
		;;
	"[ RUN      ] "* | "[==========] "* | "[  PASSED  ] "*) ;;
	*) printf '#   %s\n' "$line" ;;
	esac
done <"$WORK/log"
if [ $passed -eq 0 ] || { [ $rc -ne 0 ] && [ $failed -eq 0 ]; }; then
	failed=$((failed + 1))
	echo "not ok - test-deploy.exe ended with status $rc and $passed tests passed"
fi
echo "# deploy engine under wine: $passed passed, $skipped skipped, $failed failed"
[ $failed -eq 0 ]
