#!/bin/sh
# Deploy on a Windows-shaped SDK tree, through the real rocmd on Linux
# (--root with --sdk-layout windows): C:\Program Files\AMD\ROCm\6.2\bin holding
# amdhip64_6.dll, rocblas.dll and rocblas\library from Debian's real library
# files, and a Windows package whose rocblas.dll is a real PE built here with
# mingw-w64 (importing amdhip64_6.dll, with a VERSIONINFO). Checks: the target
# is the Windows layout's (bin\rocblas.dll + bin\rocblas\library), deploy
# replaces both, the originals are also kept under the names people know
# (rocblas_backup.dll, rocblas_backup\), rollback to the originals restores
# both byte for byte, and the smoke test says it is not run for a Windows
# target on Linux.
#
# Usage: test-lib-windows.sh ROCMD ROCMCTL
set -u
. "$(dirname "$0")/../lib/harness.sh"
ROCMD=$1
CTL=$2
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
L=$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ ! -f "$L/TensileLibrary.dat" ]; then
	echo "skip: no real SDK trees in $TREES (tests/fixtures/make-trees.sh)"
	exit 77
fi
for t in x86_64-w64-mingw32-gcc x86_64-w64-mingw32-windres x86_64-w64-mingw32-dlltool; do
	command -v $t >/dev/null 2>&1 || { echo "skip: $t missing (mingw-w64)"; exit 77; }
done
harness_init libwin
W=$DIR/root
B="$W/c/Program Files/AMD/ROCm/6.2/bin"

# Two real PE DLLs: the SDK's rocblas.dll and the package's, different versions.
M=$DIR/mingw
if ! make_rocblas_dll "$M" "$M/sdk-rocblas.dll" "4,2,0,0" 64 ||
	! make_rocblas_dll "$M" "$M/pkg-rocblas.dll" "4,2,0,7" 128; then
	echo "skip: mingw-w64 could not build a DLL"
	exit 77
fi

mkdir -p "$B/rocblas/library" "$W/registry"
: >"$B/amdhip64_6.dll"
: >"$B/hiprtc0602.dll"
cp "$M/sdk-rocblas.dll" "$B/rocblas.dll"
printf 'HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=41134\n' >"$B/.hipVersion"
cp "$L/TensileLibrary.dat" "$L/TensileLibrary_gfx803.co" "$L/Kernels.so-000-gfx803.hsaco" "$B/rocblas/library/"
cp -a "$B" "$DIR/bin-original"

P=$DIR/pkg/rocm.gfx1030.V5.0.for.hip.sdk.6.2.4
mkdir -p "$P/library"
cp "$M/pkg-rocblas.dll" "$P/rocblas.dll"
cp "$L/TensileLibrary.dat" "$L/Kernels.so-000-gfx1030.hsaco" "$P/library/"

printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "off"}}\n' >"$DIR/rocmd.json"
HIP_PATH='C:\Program Files\AMD\ROCm\6.2\' HIP_PATH_62='C:\Program Files\AMD\ROCm\6.2\' \
	"$ROCMD" --state-dir "$STATE" --socket "$SOCK" --config "$CONF" \
	--root "$W" --sdk-layout windows || bail "rocmd did not start"
wait_for "the Windows SDK is found" 60 has_event sdk.library_inspected 'ROCm\\6.2'
check "import the Windows package" 0 ctl --json pkg import "$P"
contains "it is a Windows package" "$DIR/out" '"platform":[[:space:]]*"windows"'

check "lib status" 0 ctl --json lib status
contains "the target is the Windows layout's library" "$DIR/out" 'ROCm\\\\6.2\\\\bin\\\\rocblas\\\\library'
contains "and its rocblas.dll" "$DIR/out" 'ROCm\\\\6.2\\\\bin\\\\rocblas.dll'

check "deploy to the Windows tree" 0 ctl lib deploy sdk-1 --package 1
contains "the smoke test says why it did not run" "$DIR/out" "not run for a Windows target on Linux"
same "bin\\rocblas\\library = the package's library" "$P/library" "$B/rocblas/library"
if cmp -s "$P/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll = the package's"; else
	bad "bin\\rocblas.dll = the package's"; fi
if cmp -s "$DIR/bin-original/rocblas.dll" "$B/rocblas_backup.dll"; then
	ok "the original DLL is also kept as rocblas_backup.dll"
else bad "the original DLL is also kept as rocblas_backup.dll"; ls -la "$B" | sed 's/^/#   /'; fi
if [ -d "$B/rocblas_backup" ]; then ok "and the original folder as rocblas_backup"; else
	bad "and the original folder as rocblas_backup"; fi
check "verify" 0 ctl lib verify sdk-1
contains "binary and library pair" "$DIR/out" "same package: yes"

check "rollback to the originals" 0 ctl lib rollback sdk-1 --to original
same "bin\\rocblas\\library is the original" "$DIR/bin-original/rocblas/library" "$B/rocblas/library"
if cmp -s "$DIR/bin-original/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll is the original"; else
	bad "bin\\rocblas.dll is the original"; fi

harness_done
