#!/bin/sh
# SDK discovery on Windows, under wine: the real rocmd.exe (console mode) and
# rocmctl.exe over \\.\pipe\rocmd, on Windows-layout HIP SDK trees made in the
# wine prefix exactly where the HIP SDK installer puts them:
#   C:\Program Files\AMD\ROCm\6.2\bin\amdhip64_6.dll, hiprtc0602.dll,
#   rocblas.dll (real DLLs: fake-amdhip64.c, fake-rocblas.c), .hipVersion,
#   bin\rocblas\library\ with a lazy-loading index and a real code object
#   (Debian's rocBLAS Kernels.so-000-gfx1030.hsaco when the SDK test cache
#   has it, else an AMDGPU ELF header for gfx1103 from tests/fuzz/corpus/sdk);
#   HKLM\Software\AMD\ROCm\6.2 InstallDir and HIP_PATH / HIP_PATH_62 in the
#   machine environment (wine reg add).
# It checks: the SDK is listed with its version and archs; the HIP probe
# loads the SDK's amdhip64_6.dll and reports no GPU, cleanly; a 6.4 SDK copied
# in while rocmd runs appears (recursive watch on C:\Program Files\AMD\ROCm);
# an SDK named only by a HIP_PATH_NN set in the registry after rocmd started
# is found (the machine environment is read at every scan), at a path that is
# not ASCII (C:\HIP-Jürgen\6.1: UTF-8 inside, UTF-16 to Windows); removing 6.2
# marks it removed, history kept; a HIP runtime that crashes and one that
# hangs are reported, and the hanging probe is ended at its time limit.
#
# Usage: test-sdk-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$1
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
HSACO=$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/Kernels.so-000-gfx1030.hsaco
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
win_prefix sdkwin rocmd-sdk
ROCM="$C/Program Files/AMD/ROCm"
ENVKEY='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'

listed() { ctl sdk list >"$OUT" && grep -q -- "$1" "$OUT"; }
inspections() { ctl --json sdk list | sed -n 's/.*"inspections":[[:space:]]*\([0-9]*\).*/\1/p'; }
scanned() { [ "$(inspections)" -ge 1 ] 2>/dev/null; }
scans() { ctl --json sdk list | sed -n 's/.*"scans":[[:space:]]*\([0-9]*\).*/\1/p'; }

# make_sdk DIR MINOR: a Windows-layout HIP SDK 6.MINOR in DIR (a Unix path in the prefix).
make_sdk() {
	d=$1 minor=$2
	mkdir -p "$d/bin/rocblas/library"
	printf 'HIP_VERSION_MAJOR=6\r\nHIP_VERSION_MINOR=%s\r\nHIP_VERSION_PATCH=4113%s\r\n' \
		"$minor" "$minor" >"$d/bin/.hipVersion"
	cp "$BUILD/tests/windows/amdhip64_6.dll" "$d/bin/amdhip64_6.dll"
	cp "$BUILD/tests/windows/rocblas.dll" "$d/bin/rocblas.dll"
	# hiprtc is only looked for by name here.
	cp "$BUILD/tests/windows/rocblas.dll" "$d/bin/hiprtc060$minor.dll"
	if [ -f "$HSACO" ] && [ "$minor" = 2 ]; then
		cp "$HSACO" "$d/bin/rocblas/library/"
		: >"$d/bin/rocblas/library/TensileLibrary_lazy_gfx1030.dat"
	else
		tail -c +2 "$HERE/../fuzz/corpus/sdk/elf-gfx1103" >"$d/bin/rocblas/library/Kernels.so-000-gfx1103.hsaco"
		: >"$d/bin/rocblas/library/TensileLibrary_lazy_gfx1103.dat"
	fi
}
ARCH62=gfx1103
[ -f "$HSACO" ] && ARCH62=gfx1030

cp "$BUILD/daemon/rocmd.exe" "$BUILD/daemon/rocmd-hip-probe.exe" "$BUILD/client/rocmctl.exe" "$T/"
# (The service stages before this one leave a stand-in tree there.)
rm -rf "$ROCM"
make_sdk "$ROCM/6.2" 2
wine reg add 'HKLM\Software\AMD\ROCm\6.2' /v InstallDir /t REG_SZ \
	/d 'C:\Program Files\AMD\ROCm\6.2\' /f >/dev/null 2>&1
wine reg add "$ENVKEY" /v HIP_PATH /t REG_SZ /d 'C:\Program Files\AMD\ROCm\6.2\' /f >/dev/null 2>&1
wine reg add "$ENVKEY" /v HIP_PATH_62 /t REG_SZ /d 'C:\Program Files\AMD\ROCm\6.2\' /f >/dev/null 2>&1
# An AMD display driver's entry in the adapters' class key, as its installer
# writes it (the driver version is read from here, not from a HIP runtime).
DISPLAY='HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\0007'
wine reg add "$DISPLAY" /v ProviderName /t REG_SZ /d 'Advanced Micro Devices, Inc.' /f >/dev/null 2>&1
wine reg add "$DISPLAY" /v DriverVersion /t REG_SZ /d '31.0.24027.1012' /f >/dev/null 2>&1
wine reg add "$DISPLAY" /v RadeonSoftwareVersion /t REG_SZ /d '24.3.1' /f >/dev/null 2>&1
cat >"$T/sdk.json" <<'JSON'
{
	"state_dir": "C:\\rocmd-sdk\\state",
	"log": { "level": "info", "file": "C:\\rocmd-sdk\\rocmd.log" },
	"sdk": { "debounce_ms": 500, "probe_timeout_ms": 10000 }
}
JSON

start=$(date +%s)
wine 'C:\rocmd-sdk\rocmd.exe' --foreground --config 'C:\rocmd-sdk\sdk.json' >"$T/console.out" 2>&1 &
DAEMON=$!
wait_for "rocmd.exe's first SDK scan and inspection" 60 scanned

ctl sdk list >"$OUT"
tr -d '\r' <"$OUT" | sed 's/^/#   /'
if grep -q "C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2 .* 6.2 .* present .*$ARCH62" "$OUT"; then
	ok "sdk list: C:\\Program Files\\AMD\\ROCm\\6.2, version 6.2, present, rocBLAS archs $ARCH62"
else
	bad "sdk list shows the 6.2 SDK"
fi
ctl --json sdk show 'C:\Program Files\AMD\ROCm\6.2' >"$OUT"
if grep -q '"hip_runtime":[[:space:]]*"C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2\\\\bin\\\\amdhip64_6.dll"' "$OUT" &&
	grep -q '"rocblas_binary":[[:space:]]*"C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2\\\\bin\\\\rocblas.dll"' "$OUT" &&
	grep -q '"hiprtc":[[:space:]]*"C:.*hiprtc0602.dll"' "$OUT"; then
	ok "sdk show: bin\\amdhip64_6.dll, bin\\hiprtc0602.dll and bin\\rocblas.dll of a 6.2 SDK"
else
	bad "sdk show names the 6.2 runtime DLLs"
fi
if grep -q '"registry":[[:space:]]*"6.2"' "$OUT" && grep -q '"HIP_PATH_NN":[[:space:]]*"6.2"' "$OUT"; then
	ok "version sources: the registry key ROCm\\6.2 and HIP_PATH_62 (machine environment)"
else
	bad "version sources include the registry and HIP_PATH_62"
fi
if grep -q 'C:\\\\Program Files\\\\AMD\\\\ROCm\\\\6.2\\\\"' "$OUT"; then
	ok "HIP_PATH's value (trailing backslash) is an alias of the same install"
else
	bad "HIP_PATH alias"
fi
# One recursive watch covers every SDK under ROCm (not AMD's whole folder).
ctl --json sdk list >"$OUT"
if grep -q '"watches":[[:space:]]*1,' "$OUT" &&
	grep -q '"watched":[[:space:]]*\["C:/Program Files/AMD/ROCm"\]' "$OUT"; then
	ok "one recursive watch: C:\\Program Files\\AMD\\ROCm"
else
	bad "the watches"
fi
ctl --json gpu list >"$OUT"
if grep -q '"amdgpu_version":[[:space:]]*"24.3.1"' "$OUT"; then
	ok "the AMD display driver's version (RadeonSoftwareVersion) is read from the registry"
else
	bad "the AMD display driver's version ($(tr -d '\r\n' <"$OUT" | cut -c1-300))"
fi
ctl gpu list >"$OUT"
if grep -q "no AMD GPU found" "$OUT" && grep -q "HIP runtime: 0 devices" "$OUT"; then
	ok "gpu list: no GPU, cleanly; rocmd-hip-probe.exe loaded the SDK's amdhip64_6.dll (0 devices)"
else
	bad "gpu list without a GPU"
fi

# A second SDK appears while rocmd runs, copied in file by file as an
# installer writes it: one rescan once the tree has been quiet.
make_sdk "$T/staging-6.4" 4
before=$(scans)
cp -r "$T/staging-6.4" "$ROCM/6.4"
t0=$(date +%s)
wait_for "6.4 copied in while running: listed (watch on C:\\Program Files\\AMD\\ROCm)" 30 \
	listed 'ROCm\\6.4 .* 6.4 .* present .*gfx1103'
echo "# seen after $(($(date +%s) - t0)) s (debounce 0.5 s)"
after=$(scans)
[ "$((after - before))" -eq 1 ] && ok "the copy caused one rescan" ||
	bad "the copy caused $((after - before)) rescans"
has_event sdk.added 'ROCm\\6.4' && ok "an sdk.added event for 6.4" || bad "sdk.added event for 6.4"
ctl --json sdk show 'C:\Program Files\AMD\ROCm\6.4' >"$OUT"
if grep -q '"code_object_archs":[[:space:]]*\["gfx1103"\]' "$OUT"; then
	ok "6.4's code object read as gfx1103 (ELF e_flags through MapViewOfFile)"
else
	bad "6.4's code object arch"
fi

# An SDK outside Program Files, named only by HIP_PATH_61 set after rocmd
# started: a service's own environment never changes; the machine's does.
# Its path is not ASCII: names go through the wide-character API as UTF-8.
make_sdk "$C/HIP-Jürgen/6.1" 1
LC_ALL=C.UTF-8 wine reg add "$ENVKEY" /v HIP_PATH_61 /t REG_SZ /d 'C:\HIP-Jürgen\6.1\' /f \
	>/dev/null 2>&1
ctl sdk rescan >/dev/null
wait_for "HIP_PATH_61 set in the registry while running: C:\\HIP-Jürgen\\6.1 found" 30 \
	listed 'C:\\HIP-Jürgen\\6.1 .* 6.1 .* \.hipVersion .* present'
# By id (rocmctl.exe also takes the path as UTF-8 now: test-wpkg-win.sh names C:\...\Łódź).
id=$(ctl sdk list | grep 'HIP-Jürgen' | awk '{print $1}')
ctl --json sdk show "${id:-none}" >"$OUT"
if grep -q '"code_object_archs":[[:space:]]*\["gfx1103"\]' "$OUT"; then
	ok "files under a non-ASCII path read: bin\\.hipVersion and the code object (gfx1103)"
else
	bad "files under C:\\HIP-Jürgen\\6.1"
fi

ctl --json sdk list >"$OUT"
if grep -q '"watches":[[:space:]]*2,' "$OUT"; then
	ok "an SDK outside it gets a watch of its own (2 in all)"
else
	bad "the watch of C:\\HIP-Jürgen\\6.1"
fi

# Removing 6.2: marked removed, history kept.
rm -rf "$ROCM/6.2"
wait_for "6.2 removed while running: marked removed" 30 listed 'ROCm\\6.2 .* removed'
has_event sdk.removed 'ROCm\\6.2' && ok "an sdk.removed event for 6.2" || bad "sdk.removed event for 6.2"
ctl sdk list >"$OUT"
tr -d '\r' <"$OUT" | sed 's/^/#   /'
grep -q 'ROCm\\6.4 .* present' "$OUT" && ok "6.4 still present" || bad "6.4 still present"

# A HIP runtime that crashes, then one that hangs (the newest SDK's runtime is
# the one probed): each runs in rocmd-hip-probe.exe, in a job object with a
# time limit; rocmd says what happened and carries on.
gpu_status() { ctl gpu list >"$OUT" && grep -q -- "$1" "$OUT"; }
make_sdk "$T/staging-6.8" 8
cp "$BUILD/tests/windows/amdhip64_crash.dll" "$T/staging-6.8/bin/amdhip64_6.dll"
cp -r "$T/staging-6.8" "$ROCM/6.8"
wait_for "a runtime that crashes: reported, rocmd unharmed" 60 \
	gpu_status 'crashed the probe (exception 0xC0000005)'
make_sdk "$T/staging-6.9" 9
cp "$BUILD/tests/windows/amdhip64_hang.dll" "$T/staging-6.9/bin/amdhip64_6.dll"
n=$(inspections)
cp -r "$T/staging-6.9" "$ROCM/6.9"
# The answer of a scan that started after 6.9 arrived.
inspected_after() { [ "$(inspections)" -gt "$n" ] 2>/dev/null && gpu_status "$1"; }
wait_for "a runtime that hangs: the probe is ended at the time limit" 60 \
	inspected_after 'did not answer within 10000 ms'
live_probes() { prefix_procs 'rocmd-hip-probe'; }
sleep 1
if live_probes >"$OUT"; then
	bad "no probe process left behind"
else
	ok "no probe process left behind (TerminateJobObject)"
fi

ctl shutdown >/dev/null
wait $DAEMON
echo "# SDK discovery under wine: $(($(date +%s) - start)) s"
harness_done "windows SDK discovery"
