#!/bin/sh
# The Windows installer under wine (its own prefix): scripts/build-msi.sh
# builds rocmd-VERSION-x64.msi, the zip and SHA256SUMS into BUILD/dist, and a
# second MSI one patch version up for the upgrade. Checked:
#   msiexec /i /qn   the files in C:\Program Files\rocmd; the service
#                    registered (auto start, NT AUTHORITY\LocalService,
#                    "--foreground") and running; rocmctl.exe status answering
#                    over \\.\pipe\rocmd with its state in C:\ProgramData\rocmd;
#                    rocmctl's folder on the machine's PATH; the event log source;
#                    the idle agent in HKLM's Run key;
#   upgrade          the next version installed over it: one product left, at
#                    the new version, the service running on the same database
#                    (its events from before the upgrade still listed);
#   msiexec /x /qn   the service removed, the files and the PATH entry gone,
#                    C:\ProgramData\rocmd (database, store, backups) kept;
#   msiexec /x PURGE=1  after installing again: the state folder gone too.
#   no SDK           the GPU found through the display driver's HIP runtime
#                    (System32\amdhip64_6.dll; a stand-in reporting a Radeon
#                    780M, tests/windows/fake-amdhip64.c): arch, name, compute
#                    units and the driver's HIP version in rocmctl gpu list;
#                    without it, no HIP runtime said, and the DXGI adapters
#                    listed (headless wine's DXGI has none: it says why);
#   the zip          holds the same executables as the MSI.
# What wine cannot show (MsiConfigureServices, the state folder's access list,
# a real SCM's path quoting) is listed in docs/SERVICE.md.
#
# Usage: test-msi-win.sh BUILD-DIR     (a mingw-w64 build folder)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$1
. "$ROOT/tests/lib/harness.sh"
. "$ROOT/tests/lib/harness-wine.sh"
# A prefix of its own: the other stages' services and configs stay out of it.
unset WINEPREFIX
win_prefix msi rocmd-msi
PF="$C/Program Files/rocmd"
# shellcheck disable=SC2034 # harness-wine.sh's ctl runs it
CTL='C:\Program Files\rocmd\rocmctl.exe'
SVCKEY='HKLM\System\CurrentControlSet\Services\rocmd'
ENVKEY='HKLM\System\CurrentControlSet\Control\Session Manager\Environment'
LOGKEY='HKLM\System\CurrentControlSet\Services\EventLog\Application\rocmd'
UNINST='HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall'
V=$(sed -n 's/^project(rocmd VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
V2=$(echo "$V" | awk -F. '{printf "%d.%d.%d", $1, $2, $3 + 1}')

reg() { wine reg query "$@" 2>/dev/null | tr -d '\r'; }
sc_state() { wine sc query rocmd 2>/dev/null | tr -d '\r' | sed -n 's/.*STATE *: *[0-9]* *\([A-Z_]*\).*/\1/p'; }
running() { [ "$(sc_state)" = RUNNING ]; }
msi() { wine msiexec "$@" /qn >"$OUT" 2>&1; }

if "$ROOT/scripts/build-msi.sh" "$BUILD" "$BUILD/dist" "$V" >"$OUT" 2>&1 &&
	"$ROOT/scripts/build-msi.sh" "$BUILD" "$DIR/next" "$V2" >>"$OUT" 2>&1; then
	ok "build-msi.sh builds the MSI, the zip and SHA256SUMS"
	sed 's/^/#   /' "$BUILD/dist/SHA256SUMS"
else
	bail "build-msi.sh failed"
fi
(cd "$BUILD/dist" && sha256sum -c --quiet SHA256SUMS) >"$OUT" 2>&1 &&
	ok "SHA256SUMS matches the artifacts" || bad "SHA256SUMS matches the artifacts"
unzip -Z1 "$BUILD/dist/rocmd-$V-x64.zip" >"$OUT" 2>&1
for f in rocmd.exe rocmctl.exe rocmtune.exe rocmd-hip-probe.exe rocmd-rocblas-smoke.exe rocmd-idle-agent.exe librocmd-gemm.dll; do
	grep -q "^rocmd-$V-x64/$f$" "$OUT" || bad "the zip holds $f"
done
ok "the zip holds the six executables and librocmd-gemm.dll"

cp "$BUILD/dist/rocmd-$V-x64.msi" "$DIR/next/rocmd-$V2-x64.msi" "$T/"
# Wine's services.exe ends (and every service with it) once no ordinary
# process is left: a keep-alive process stands in for the logged-in user.
cmake --build "$BUILD" --target pipe-squatter fake-amdhip64-780m >/dev/null 2>&1
cp "$BUILD/tests/windows/pipe-squatter.exe" "$T/"
# No SDK in this prefix; the display driver's HIP runtime is in System32.
cp "$BUILD/tests/windows/amdhip64_780m.dll" "$C/windows/system32/amdhip64_6.dll"
wine 'C:\rocmd-msi\pipe-squatter.exe' '\\.\pipe\rocmd-msi-keepalive' 'C:\rocmd-msi\stop-keepalive' \
	>/dev/null 2>&1 &
KEEPALIVE=$!

echo "# install"
msi /i "C:\\rocmd-msi\\rocmd-$V-x64.msi" /l*v 'C:\rocmd-msi\install.log' &&
	ok "msiexec /i installs (exit 0)" || bad "msiexec /i installs"
for f in rocmd.exe rocmctl.exe rocmtune.exe rocmd-hip-probe.exe rocmd-rocblas-smoke.exe rocmd-idle-agent.exe librocmd-gemm.dll; do
	[ -f "$PF/$f" ] || bad "$f is installed"
done
ok "the six executables and librocmd-gemm.dll are in C:\\Program Files\\rocmd"
# rocmtune.exe loads librocmd-gemm.dll: the installed one starts.
wine 'C:\Program Files\rocmd\rocmtune.exe' --version >"$OUT" 2>&1 &&
	ok "the installed rocmtune.exe runs (--version)" || bad "the installed rocmtune.exe runs (--version)"
reg "$SVCKEY" >"$OUT"
grep -q 'ImagePath.*C:\\Program Files\\rocmd\\rocmd.exe.* --foreground' "$OUT" &&
	grep -q 'ObjectName.*NT AUTHORITY\\LocalService' "$OUT" && grep -q 'Start.*0x2' "$OUT" &&
	ok "the service is registered: auto start, LocalService, --foreground" ||
	bad "the service is registered: auto start, LocalService, --foreground"
wait_until 30 running && ok "the service is running" || bad "the service is running"
wait_until 30 ctl status >"$OUT" 2>&1 && ok "rocmctl.exe status answers over the pipe" ||
	bad "rocmctl.exe status answers over the pipe"
ctl --json status >"$OUT" 2>&1
grep -q '"state_dir":[[:space:]]*"C:\\\\ProgramData\\\\rocmd"' "$OUT" &&
	ok "its state is in C:\\ProgramData\\rocmd" || bad "its state is in C:\\ProgramData\\rocmd"
reg "$ENVKEY" /v PATH >"$OUT"
grep -q 'C:\\Program Files\\rocmd' "$OUT" && ok "rocmctl's folder is on the machine's PATH" ||
	bad "rocmctl's folder is on the machine's PATH"
reg 'HKLM\Software\Microsoft\Windows\CurrentVersion\Run' /v rocmd-idle-agent >"$OUT"
grep -q 'rocmd-idle-agent.*"C:\\Program Files\\rocmd\\rocmd-idle-agent.exe"' "$OUT" &&
	ok "the idle agent starts at every logon (HKLM Run, quoted path)" ||
	bad "the idle agent starts at every logon (HKLM Run, quoted path)"
reg "$LOGKEY" >"$OUT"
grep -q 'EventMessageFile.*C:\\Program Files\\rocmd\\rocmd.exe' "$OUT" &&
	ok "the event log source is registered" || bad "the event log source is registered"
gpu_seen() { ctl gpu list >"$OUT" 2>&1 && grep -q 'gfx1103 .*AMD Radeon 780M Graphics' "$OUT"; }
wait_for "no SDK: the GPU is found through the display driver's HIP runtime" 60 gpu_seen
sed 's/^/#   /' "$OUT"
grep -q 'gfx1103 .*AMD Radeon 780M Graphics *integrated *12 ' "$OUT" &&
	ok "gpu list: gfx1103, its name, integrated, 12 compute units" ||
	bad "gpu list: gfx1103, its name, integrated, 12 compute units"
grep -q "HIP runtime: 1 device (C:.windows.system32.amdhip64_6.dll, the display driver's: no SDK has one); HIP driver version 60342134" "$OUT" &&
	ok "gpu list names the driver's runtime and its HIP version" ||
	bad "gpu list names the driver's runtime and its HIP version"
ctl events --all >"$DIR/events.before" 2>&1
FIRST=$(head -n 1 "$DIR/events.before")

echo "# upgrade to $V2"
msi /i "C:\\rocmd-msi\\rocmd-$V2-x64.msi" /l*v 'C:\rocmd-msi\upgrade.log' &&
	ok "msiexec /i of $V2 upgrades (exit 0)" || bad "msiexec /i of $V2 upgrades"
reg "$UNINST" /s >"$OUT"
n=$(grep -c 'DisplayName.*REG_SZ *rocmd$' "$OUT")
[ "$n" -eq 1 ] && grep -q "DisplayVersion.*$V2" "$OUT" && ! grep -q "DisplayVersion.*REG_SZ *$V$" "$OUT" &&
	ok "one rocmd product is left, at $V2" || bad "one rocmd product is left, at $V2 ($n)"
wait_until 30 running && wait_until 30 ctl status >/dev/null 2>&1 &&
	ok "the service runs again after the upgrade" || bad "the service runs again after the upgrade"
ctl events --all >"$DIR/events.after" 2>&1
[ -n "$FIRST" ] && grep -qxF -- "$FIRST" "$DIR/events.after" &&
	ok "the upgrade kept the database (its first event is still listed)" ||
	bad "the upgrade kept the database (its first event is still listed)"

# No HIP runtime at all (the driver's taken away): the display adapters from
# DXGI, as not usable by HIP; headless wine's DXGI lists none and says so.
rm -f "$C/windows/system32/amdhip64_6.dll"
ctl sdk rescan >/dev/null 2>&1
no_runtime() { ctl gpu list >"$OUT" 2>&1 && grep -q "HIP runtime: none: no SDK has one and the display driver has none; " "$OUT"; }
wait_for "no HIP runtime: gpu list says so" 60 no_runtime
grep "HIP runtime" "$OUT" | sed 's/^/#   /'
grep -q "display adapters: .*not usable by HIP\|DXGI lists no adapters here (CreateDXGIFactory1: 0x" "$OUT" &&
	ok "and lists the display adapters from DXGI, or says why it cannot" ||
	bad "and lists the display adapters from DXGI, or says why it cannot"

echo "# uninstall"
# Wine's StopServices asks the service to stop and returns at once, without
# the wait Windows Installer does (Wait="yes"), so RemoveFiles could find
# rocmd.exe still running: the service is stopped first, as Windows would
# have done inside msiexec.
wine sc stop rocmd >/dev/null 2>&1
wait_until 30 sh -c "wine sc query rocmd 2>/dev/null | tr -d '\r' | grep -q 'STATE *: *1 '"
msi /x "C:\\rocmd-msi\\rocmd-$V2-x64.msi" /l*v 'C:\rocmd-msi\uninstall.log' &&
	ok "msiexec /x uninstalls (exit 0)" || bad "msiexec /x uninstalls"
wine sc query rocmd >"$OUT" 2>&1 && bad "the service is removed" || ok "the service is removed"
[ ! -e "$PF/rocmd.exe" ] && [ ! -e "$PF/rocmctl.exe" ] && ok "the installed files are gone" || { ls -la "$PF" >"$OUT" 2>&1; false; } ||
	bad "the installed files are gone"
reg "$ENVKEY" /v PATH >"$OUT"
grep -q 'Program Files\\rocmd' "$OUT" && bad "the PATH entry is gone" || ok "the PATH entry is gone"
[ -f "$C/ProgramData/rocmd/rocmd.db" ] && ok "C:\\ProgramData\\rocmd and its database are kept" ||
	bad "C:\\ProgramData\\rocmd and its database are kept"

# Installed again over the kept state, then removed with PURGE=1: the
# state folder goes too.
msi /i "C:\\rocmd-msi\\rocmd-$V2-x64.msi" /l*v 'C:\rocmd-msi\install2.log' &&
	ok "msiexec /i over the kept state (exit 0)" || bad "msiexec /i over the kept state"
wait_until 30 running && wait_until 30 ctl status >/dev/null 2>&1 &&
	ok "the service runs on the kept state" || bad "the service runs on the kept state"
wine sc stop rocmd >/dev/null 2>&1
wait_until 30 sh -c "wine sc query rocmd 2>/dev/null | tr -d '\r' | grep -q 'STATE *: *1 '"
msi /x "C:\\rocmd-msi\\rocmd-$V2-x64.msi" PURGE=1 /l*v 'C:\rocmd-msi\purge.log' &&
	ok "msiexec /x PURGE=1 uninstalls (exit 0)" || bad "msiexec /x PURGE=1 uninstalls"
wine sc query rocmd >"$OUT" 2>&1 && bad "the service is removed again" || ok "the service is removed again"
[ ! -e "$C/ProgramData/rocmd" ] && ok "PURGE=1: C:\\ProgramData\\rocmd is gone" || {
	ls -laR "$C/ProgramData/rocmd" >"$OUT" 2>&1
	bad "PURGE=1: C:\\ProgramData\\rocmd is gone" "$OUT"
}

touch "$T/stop-keepalive"
wait $KEEPALIVE
harness_done "msi stage"
