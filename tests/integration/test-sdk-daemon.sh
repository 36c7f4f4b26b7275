#!/bin/sh
# SDK discovery end to end: the real rocmd (--root on a sandbox) and rocmctl on
# a private socket, with SDK trees made of Debian's real HIP and rocBLAS files
# (make-trees.sh): HIP 5.2.3 in the distribution layout under /usr beside
# /opt/rocm-5.7.1 (AMD's layout, an absolute /opt/rocm symlink), a KFD topology
# with a gfx1103 iGPU, the 5.2.3 -> 5.7.1 upgrade of /usr while rocmd runs, the
# removal of /opt/rocm-5.7.1 (history kept), sdk rescan and its permission,
# a Windows-shaped tree under --sdk-layout windows, and an unreadable SDK
# folder seen by a daemon running as nobody.
#
# Usage: test-sdk-daemon.sh PATH-TO-ROCMD PATH-TO-ROCMCTL
set -u
. "$(dirname "$0")/../lib/harness.sh"
ROCMD=$1
CTL=$2
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
if [ ! -f "$TREES/trixie/usr/share/hip/version" ] || [ ! -f "$TREES/bookworm/usr/share/hip/version" ]; then
	echo "skip: no real SDK trees in $TREES (tests/fixtures/make-trees.sh could not download Debian's packages)"
	exit 77
fi
harness_init sdk
ROOT=$DIR/root

scans() { ctl --json sdk list | sed -n 's/.*"scans":[[:space:]]*\([0-9]*\).*/\1/p'; }
inspections() { ctl --json sdk list | sed -n 's/.*"inspections":[[:space:]]*\([0-9]*\).*/\1/p'; }
# A scan is done when its deep pass (libraries, GPUs) has been written too.
scanned() { [ "$(inspections)" -ge "$1" ] 2>/dev/null && [ "$(scans)" -le "$(inspections)" ]; }

# /opt/rocm-VER as AMD lays it out, from trixie's real files (hard links).
make_opt() {
	d=$ROOT/opt/rocm-$1
	l=$TREES/trixie/usr/lib/x86_64-linux-gnu
	mkdir -p "$d/lib/rocblas" "$d/share/hip" "$d/bin" "$d/include"
	cp -al "$l"/libamdhip64.so* "$l"/librocblas.so* "$d/lib/"
	cp -al "$l/rocblas/2.47.0/library" "$d/lib/rocblas/library"
	cp -al "$TREES/trixie/usr/share/hip/version" "$d/share/hip/"
	cp -al "$TREES/trixie/usr/bin/hipcc" "$TREES/trixie/usr/bin/hipconfig" "$d/bin/"
	cp -al "$TREES/trixie/usr/include/hip" "$d/include/"
	ln -sfn "/opt/rocm-$1" "$ROOT/opt/rocm"
}

mkdir -p "$ROOT"
cp -al "$TREES/bookworm/usr" "$ROOT/usr"
make_opt 5.7.1
n=$ROOT/sys/class/kfd/kfd/topology/nodes
mkdir -p "$n/0" "$n/1/mem_banks/0"
printf 'cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n' >"$n/0/properties"
printf 'cpu_cores_count 0\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 110003\nvendor_id 4098\ndevice_id 5567\nlocation_id 49408\n' >"$n/1/properties"
printf 'heap_type 1\nsize_in_bytes 536870912\n' >"$n/1/mem_banks/0/properties"
printf '{"sdk": {"debounce_ms": 300}}\n' >"$DIR/rocmd.json"

rocmd_start --root "$ROOT" || bail "rocmd did not start"
wait_for "first scan" 120 scanned 1

# Two SDKs side by side, each with its version and where it came from.
ctl sdk list >"$DIR/list"
cat "$DIR/list"
contains "distribution layout found" "$DIR/list" "/usr .* 5.2.3 .* package changelog .* present .* no rocBLAS"
contains "/opt/rocm-5.7.1 found" "$DIR/list" "/opt/rocm-5.7.1 .* 5.7.1 .* folder name .* present"
contains "library lacks the GPU's arch" "$DIR/list" "gfx1103 NO"
ctl --json sdk list >"$DIR/list.json"
contains "/opt/rocm is an alias of /opt/rocm-5.7.1" "$DIR/list.json" '"layout":[[:space:]]*"opt"'
ctl sdk show /opt/rocm-5.7.1 >"$DIR/show"
cat "$DIR/show"
contains "archs from TensileLibrary.dat" "$DIR/show" "Index archs .*gfx1030,gfx1100,gfx1101,gfx1102,gfx803,gfx900,gfx906,gfx908,gfx90a"
contains "code object archs from ELF" "$DIR/show" "Code object archs .*gfx1030,gfx803"
contains "gfx1103 said plainly" "$DIR/show" "GPU gfx1103: NOT covered: the rocBLAS library has no kernels for this arch"
contains "fingerprint" "$DIR/show" "Fingerprint  *[0-9a-f]\{64\}"
ctl sdk show 1 >"$DIR/show1" 2>&1 && ok "sdk show by id" || bad "sdk show by id"
ctl sdk show /nowhere >"$DIR/show2" 2>&1
[ $? -eq 1 ] && ok "sdk show of an unknown path fails" || bad "sdk show of an unknown path fails"
ctl gpu list >"$DIR/gpus"
cat "$DIR/gpus"
contains "gpu list" "$DIR/gpus" "gfx1103 .* integrated .* 12 .* 512.0 MiB .* present"
ctl status >"$DIR/status"
contains "status counts SDKs" "$DIR/status" "SDKs  *2"
ctl events --all --kind sdk.added >"$DIR/added"
[ "$(grep -c sdk.added "$DIR/added")" -eq 2 ] && ok "two sdk.added events" || bad "two sdk.added events"

# The upgrade of /usr from HIP 5.2.3 to 5.7.1 while rocmd runs.
before=$(scans)
cp -al --remove-destination "$TREES/trixie/usr/." "$ROOT/usr/"
wait_for "upgrade noticed" 15 has_event sdk.version_changed "from 5.2.3 to 5.7.1"
wait_for "rocBLAS appeared in /usr" 60 has_event sdk.library_changed "rocBLAS library of /usr changed"
after=$(scans)
ctl sdk show /usr >"$DIR/show-usr"
contains "library history after the upgrade" "$DIR/show-usr" "Library history:"
[ $((after - before)) -eq 1 ] && ok "the upgrade caused one rescan" ||
	bad "the upgrade caused $((after - before)) rescans"

# The removal of /opt/rocm-5.7.1: an event, and the history stays.
rm -rf "$ROOT/opt/rocm-5.7.1" "$ROOT/opt/rocm"
wait_for "removal noticed" 15 has_event sdk.removed "/opt/rocm-5.7.1 is gone"
ctl sdk list >"$DIR/list"
contains "removed SDK kept as history" "$DIR/list" "/opt/rocm-5.7.1 .* removed"
ctl status >"$DIR/status"
contains "status counts present SDKs" "$DIR/status" "SDKs  *1"

# sdk rescan is an action: root may, nobody may not.
ctl sdk rescan >"$DIR/rescan" && ok "sdk rescan" || bad "sdk rescan"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" --socket "$SOCK" sdk rescan >/dev/null 2>&1
	[ $? -eq 4 ] && ok "sdk rescan denied to nobody" || bad "sdk rescan denied to nobody"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" --socket "$SOCK" sdk list >/dev/null 2>&1 &&
		ok "sdk list open to nobody" || bad "sdk list open to nobody"
fi

# A Windows-shaped tree, read by the same rules (--sdk-layout windows).
W=$DIR/winroot
B="$W/c/Program Files/AMD/ROCm/6.2/bin"
mkdir -p "$B/rocblas/library" "$W/registry"
: >"$B/amdhip64_6.dll"
: >"$B/hiprtc0602.dll"
: >"$B/rocblas.dll"
printf 'HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=41134\n' >"$B/.hipVersion"
cp -al "$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/"* "$B/rocblas/library/"
# This daemon also rescans on a timer (sdk.rescan_interval_s), which is off by default.
printf '{"sdk": {"debounce_ms": 300, "rescan_interval_s": 1}}\n' >"$DIR/win.json"
HIP_PATH='C:\Program Files\AMD\ROCm\6.2\' HIP_PATH_62='C:\Program Files\AMD\ROCm\6.2\' \
	"$ROCMD" --state-dir "$DIR/winstate" --socket "$DIR/win.sock" --config "$DIR/win.json" \
	--root "$W" --sdk-layout windows || bad "windows-layout rocmd started"
SOCK_SAVE=$SOCK
SOCK=$DIR/win.sock
wait_for "windows first scan" 120 scanned 1
ctl sdk list >"$DIR/winlist"
cat "$DIR/winlist"
contains "Windows SDK found" "$DIR/winlist" 'C:\\Program Files\\AMD\\ROCm\\6.2 .* 6.2 .* present .*gfx1030'
wait_for "rescans on the configured interval" 20 scanned 3
rocmd_stop
SOCK=$SOCK_SAVE

# An unreadable SDK folder: root reads anything, so a daemon runs as nobody.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$DIR/nobody" "$ROOT/opt/rocm-6.0.0/bin"
	: >"$ROOT/opt/rocm-6.0.0/bin/hipcc"
	chmod 000 "$ROOT/opt/rocm-6.0.0"
	chown nobody "$DIR/nobody"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent \
		"$ROCMD" --state-dir "$DIR/nobody/state" --socket "$DIR/nobody/rocmd.sock" \
		--config "$DIR/rocmd.json" --root "$ROOT" || bad "rocmd as nobody started"
	SOCK=$DIR/nobody/rocmd.sock
	wait_for "nobody's first scan" 120 scanned 1
	ctl sdk list >"$DIR/nlist"
	cat "$DIR/nlist"
	contains "unreadable SDK reported" "$DIR/nlist" "/opt/rocm-6.0.0 .* unreadable"
	contains "readable SDK still listed" "$DIR/nlist" "/usr .* 5.7.1 .* present"
	rocmd_stop
	SOCK=$SOCK_SAVE
	chmod 755 "$ROOT/opt/rocm-6.0.0"
fi

harness_done
