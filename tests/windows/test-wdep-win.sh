#!/bin/sh
# The deploy engine on Windows, under wine: tests/unit/test-deploy.c
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
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
EXE=$BUILD/tests/windows/test-deploy.exe
DLL=$BUILD/tests/windows/rocblas.dll
if [ ! -f "$EXE" ] || [ ! -f "$DLL" ]; then
	bail "test-deploy.exe and rocblas.dll are built in $BUILD/tests/windows"
fi
# Always a prefix of its own, even when scripts/test-windows.sh has one.
unset WINEPREFIX
win_prefix wdep rocmd-wdep
cp "$EXE" "$DLL" "$T/"
export ROCMD_TEST_DLL='C:\rocmd-wdep\rocblas.dll'
# No time limit of our own: the caller's (test-windows.sh) applies.
wine 'C:\rocmd-wdep\test-deploy.exe' "${ROCMD_TEST_FILTER:-*}" >"$DIR/raw" 2>&1
rc=$?
tr -d '\r' <"$DIR/raw" >"$DIR/log"
summary=0
while IFS= read -r line; do
	# After "[==========] N test(s) run." cmocka lists the skips and failures again.
	case $line in
	"[==========] "*" run."*) summary=1 ;;
	esac
	[ $summary -eq 1 ] && continue
	case $line in
	"[       OK ] "*)
		ok "deploy engine: ${line#\[       OK \] }"
		;;
	"[  SKIPPED ] "*)
		skip "deploy engine: ${line#\[  SKIPPED \] }" "(reason printed above)"
		;;
	"[  FAILED  ] "*)
		bad "deploy engine: ${line#\[  FAILED  \] }"
		;;
	"[ RUN      ] "* | "[==========] "* | "[  PASSED  ] "*) ;;
	*) printf '#   %s\n' "$line" ;;
	esac
done <"$DIR/log"
if [ $passed -eq 0 ] || { [ $rc -ne 0 ] && [ $failed -eq 0 ]; }; then
	bad "test-deploy.exe ended with status $rc and $passed tests passed"
fi
harness_done "deploy engine under wine"
