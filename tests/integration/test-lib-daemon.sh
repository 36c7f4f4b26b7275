#!/bin/sh
# Deploy end to end through the real rocmd (--root on a sandbox) and rocmctl on
# a private socket. The SDK is Debian trixie's real HIP 5.7.1 + rocBLAS 5.5.1
# tree under /usr (tests/fixtures/make-trees.sh), a gfx1030 GPU in a fake KFD
# topology, and two packages imported from folders of the real library files:
# #1 with the real librocblas.so.0 binary, #2 library only, both lacking the
# original's gfx803 files (the stale-file case). Checks: deploy, status,
# verify (the GEMM smoke test says plainly it was skipped: no GPU here),
# deploy #2, rollback to the previous package, rollback to the originals and
# the whole /usr compared byte for byte with diff -r, redeploy; drift: an "SDK
# update" overwriting the library is noticed and redeployed (deploy.sync =
# deploy, and only reported after a restart with report); the overlay prints
# ROCBLAS_TENSILE_LIBPATH and leaves the SDK
# alone; a non-admin is refused; a GPU holder (a fake KFD proc entry for a
# live pid) is refused with its pid named; a restart reconciles and keeps
# the state.
#
# Issue 16's defects: a folder a non-admin owns is refused unless
# deploy.allow_user_owned_targets says otherwise, and a symlinked folder below
# a target's root (an application folder's rocblas swapped by its user for a
# symlink to a root-owned folder; a parent of the SDK's library folder
# leading out of it) is refused, the folder it leads to untouched (1); a
# deploy or rollback the database cannot record (failpoint db.deploy.commit:
# a full disk) is reported as such and recorded within seconds (9); an
# immutable file left behind is named by rocmctl lib recover, which finishes
# the deploy once it is mutable (10). After a start-up recovery that failed
# (its journal kept), lib status shows what the target holds (the fault
# harness found it showing the database's package).
#
# With the stand-in HIP runtime and a wrong rocBLAS from tests/fixtures, a deploy
# whose GEMM smoke test fails is rolled back (the real smoke test never ran on
# an AMD GPU here).
#
# Usage: test-lib-daemon.sh ROCMD ROCMCTL [FAKE-HIP FAKE-ROCBLAS-WRONG]
set -u
. "$(dirname "$0")/../lib/harness.sh"
ROCMD=$1
CTL=$2
FAKE_HIP=${3:-}
FAKE_WRONG=${4:-}
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
T=$TREES/trixie
LIBREL=usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ ! -f "$T/$LIBREL/TensileLibrary.dat" ] || [ ! -f "$T/usr/lib/x86_64-linux-gnu/librocblas.so.0.1" ]; then
	echo "skip: no real SDK trees in $TREES (tests/fixtures/make-trees.sh could not download Debian's packages)"
	exit 77
fi
harness_init lib
ROOT=$DIR/root
LIB=$ROOT/$LIBREL
HOLDER=

IMM=
on_exit() {
	[ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null
	[ -z "$IMM" ] || chattr -i "$IMM" "$LIB/TensileManifest.txt" 2>/dev/null
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
no_drift() { ctl --json lib status | grep -q '"drift":[[:space:]]*false'; }
start() { rocmd_start --root "$ROOT" || bail "rocmd did not start"; }

# The sandbox: trixie's /usr (hard links: rocmd replaces files by rename,
# never writes into them) and one gfx1030 GPU.
mkdir -p "$ROOT"
cp -al "$T/usr" "$ROOT/usr"
n=$ROOT/sys/class/kfd/kfd/topology/nodes
mkdir -p "$n/0" "$n/1/mem_banks/0" "$ROOT/sys/class/kfd/kfd/proc"
printf 'cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n' >"$n/0/properties"
printf 'cpu_cores_count 0\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 100300\nvendor_id 4098\ndevice_id 29631\nlocation_id 49408\n' >"$n/1/properties"
printf 'heap_type 1\nsize_in_bytes 536870912\n' >"$n/1/mem_banks/0/properties"

# Two packages from the real files; neither has the original's gfx803 files.
P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
for p in "$P1" "$P2"; do
	mkdir -p "$p/library"
	cp "$T/$LIBREL/TensileLibrary.dat" "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$p/library/"
done
echo "package one" >"$P1/library/TensileManifest.txt"
echo "package two" >"$P2/library/TensileManifest.txt"
cp "$T/usr/lib/x86_64-linux-gnu/librocblas.so.0.1" "$P1/librocblas.so.0"

# An application's private copy (as ollama ships one), managed as app-ollama.
APP=$ROOT/opt/ollama/lib/ollama/rocm
mkdir -p "$APP/rocblas/library"
cp "$T/$LIBREL/TensileLibrary_gfx803.co" "$APP/rocblas/library/"
cp -a "$APP" "$DIR/app-original"

printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "deploy", "smoke_timeout_ms": 20000, "app_targets": "ollama=/opt/ollama/lib/ollama/rocm@5.7"}}\n' >"$DIR/rocmd.json"
start
wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
check "import package 1" 0 ctl pkg import "$P1"
check "import package 2" 0 ctl pkg import "$P2"

check "lib status" 0 ctl lib status
contains "status lists the SDK's target" "$DIR/out" "sdk-1 .*sdk .*/usr 5.7.1 .*$LIBREL"
contains "status holds the originals" "$DIR/out" "originals"
contains "status names the matching package" "$DIR/out" "#1 for gfx1030"

# Deploy the matched package (V3 before V2.0 for SDK 5.7).
check "lib deploy" 0 ctl lib deploy
contains "deploy names the package" "$DIR/out" "Deployed package #1"
contains "the originals were backed up" "$DIR/out" "originals were backed up"
contains "the smoke test says it was skipped, and why" "$DIR/out" "GEMM smoke test: skipped: no GPU/runtime"
same "library = package 1's library" "$P1/library" "$LIB"
if [ -e "$LIB/TensileLibrary_gfx803.co" ]; then bad "stale gfx803 file left"; else ok "no stale file survives the swap"; fi
if cmp -s "$P1/librocblas.so.0" "$ROOT/usr/lib/x86_64-linux-gnu/librocblas.so.0.1"; then
	ok "the binary is package 1's"
else bad "the binary is package 1's"; fi
wait_for "discovery records the deployed library quietly (no drift)" 30 no_drift
lacks "rocmd's own write is not an SDK library change" "$(ctl events --all --kind sdk.library_changed >"$DIR/ev"; echo "$DIR/ev")" "library of /usr changed"
check "lib status --json" 0 ctl --json lib status
contains "status: deployed package 1" "$DIR/out" '"package":[[:space:]]*1'
contains "status: backup recorded" "$DIR/out" '"backup":'
check "status counts one deployment" 0 ctl --json status
contains "deployments = 1" "$DIR/out" '"deployments":[[:space:]]*1'
check "pkg rm of the deployed package is refused" 1 ctl pkg rm 1

check "lib verify" 0 ctl lib verify sdk-1
contains "verify checked every file" "$DIR/out" "4 files match"
contains "verify: the GPU's arch is covered" "$DIR/out" "gfx1030: covered"
contains "verify: binary and library pair" "$DIR/out" "same package: yes"

check "deploy package 2 (library only)" 0 ctl lib deploy /usr --package 2
same "library = package 2's library" "$P2/library" "$LIB"
if cmp -s "$P1/librocblas.so.0" "$ROOT/usr/lib/x86_64-linux-gnu/librocblas.so.0.1"; then
	ok "a library-only package keeps the binary"
else bad "a library-only package keeps the binary"; fi

check "rollback to the previous package" 0 ctl lib rollback
contains "rollback names package 1" "$DIR/out" "previous package #1"
same "library = package 1's again" "$P1/library" "$LIB"

check "rollback to the originals" 0 ctl lib rollback --to original
contains "rollback says originals" "$DIR/out" "back to the originals"
same "the whole /usr is the original, byte for byte" "$T/usr" "$ROOT/usr"
check "nothing left to roll back: exit 5 (nothing to do), said so" 5 ctl lib rollback
contains "it says there is nothing to roll back" "$DIR/out" "nothing to roll back"
check "redeploy" 0 ctl lib deploy sdk-1 --package 1
same "redeployed library = package 1's" "$P1/library" "$LIB"
check "history" 0 ctl lib history sdk-1
contains "history has the rollback" "$DIR/out" "rollback .*ok"
contains "history has the backup" "$DIR/out" "originals backed up"

# Drift: an SDK update overwrites the library (new files in, ours gone).
wait_for "no drift before the update" 30 no_drift
sleep 2.5 # past the suppression's grace period
rm -rf "$DIR/upd" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
wait_for "the overwrite is noticed as drift" 60 has_event lib.drift "was overwritten"
wait_for "auto-sync redeploys" 120 has_event lib.deployed "(drift)"
same "library = package 1's after the resync" "$P1/library" "$LIB"

# A new SDK installed while rocmd runs (AMD's layout, /opt/rocm-5.7.1): auto-sync
# deploys the matching package into it once its library has been inspected.
O=$ROOT/opt/rocm-5.7.1
mkdir -p "$DIR/opt.new/lib/rocblas" "$DIR/opt.new/share/hip"
l=$T/usr/lib/x86_64-linux-gnu
cp -al "$l"/libamdhip64.so* "$l"/librocblas.so* "$DIR/opt.new/lib/"
cp -al "$T/$LIBREL" "$DIR/opt.new/lib/rocblas/library"
cp -al "$T/usr/share/hip/version" "$DIR/opt.new/share/hip/"
mkdir -p "$ROOT/opt"
mv "$DIR/opt.new" "$O"
wait_for "the new SDK gets the matching package (deploy.sync = deploy)" 300 has_event lib.deployed "to sdk-[0-9]* (sync)"
same "its lib/rocblas/library = package 1's" "$P1/library" "$O/lib/rocblas/library"
if cmp -s "$P1/librocblas.so.0" "$O/lib/librocblas.so.0.1"; then ok "its lib/librocblas.so.0 is package 1's"; else
	bad "its lib/librocblas.so.0 is package 1's"; fi
check "the SDK's target is in the status" 0 ctl lib status
contains "the new SDK holds package 1" "$DIR/out" "sdk-[0-9]* .*/opt/rocm-5.7.1 5.7.1 .*/opt/rocm-5.7.1/lib/rocblas/library .*package #1"
check "roll the new SDK back to its originals" 0 ctl lib rollback /opt/rocm-5.7.1 --to original
same "its library is the original again" "$T/$LIBREL" "$O/lib/rocblas/library"
# Uninstalled again: one SDK is left, so TARGET may be left out below.
rm -rf "$O"
wait_for "the uninstall is noticed" 30 has_event sdk.removed "/opt/rocm-5.7.1 is gone"
check "a removed SDK's target stays in the status, not present" 0 ctl --json lib status
contains "it says not present" "$DIR/out" '"present":[[:space:]]*false'

# Overlay: rocmd's own folder, the SDK untouched.
check "overlay deploy" 0 ctl lib deploy --overlay --package 2
contains "overlay says what to set" "$DIR/out" "^ROCBLAS_TENSILE_LIBPATH=$STATE/overlay/1/library$"
same "overlay folder = package 2's library" "$P2/library" "$STATE/overlay/1/library"
same "the SDK still holds package 1" "$P1/library" "$LIB"
check "status shows the overlay" 0 ctl lib status
contains "status prints the variable" "$DIR/out" "overlay-1: set ROCBLAS_TENSILE_LIBPATH=$STATE/overlay/1/library"
check "overlay rollback to the originals" 0 ctl lib rollback --overlay --to original
if [ -d "$STATE/overlay/1/library" ] && [ -z "$(ls -A "$STATE/overlay/1/library")" ]; then
	ok "the overlay is empty again (rocBLAS falls back to the SDK's library)"
else bad "the overlay is empty again"; ls -la "$STATE/overlay/1/library" 2>&1 | sed 's/^/#   /'; fi
same "the SDK still holds package 1 after the overlay rollback" "$P1/library" "$LIB"

# The application's copy, from the same store; its originals come back.
check "status lists the application target" 0 ctl lib status
contains "app-ollama is a target" "$DIR/out" "app-ollama .*app .*/opt/ollama/lib/ollama/rocm/rocblas/library"
check "deploy to the application's copy" 0 ctl lib deploy app-ollama --package 2
same "the app's library = package 2's" "$P2/library" "$APP/rocblas/library"
check "roll the app back to its originals" 0 ctl lib rollback app-ollama --to original
same "the app's copy is its original again" "$DIR/app-original" "$APP"

# Permission: reading is open, changing is not.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	check "nobody may read lib status" 0 as_nobody "$CTL" --socket "$SOCK" lib status
	check "nobody may not deploy (exit 4)" 4 as_nobody "$CTL" --socket "$SOCK" lib deploy
	check "nobody may not roll back (exit 4)" 4 as_nobody "$CTL" --socket "$SOCK" lib rollback
else
	echo "# skip: permission checks need root and setpriv"
fi

# A process holding the GPU (KFD lists it) makes deploy refuse, naming it.
sleep 300 &
HOLDER=$!
mkdir -p "$ROOT/sys/class/kfd/kfd/proc/$HOLDER"
check "deploy refused while the GPU is held" 1 ctl lib deploy --package 2
contains "the refusal names the pid" "$DIR/err" "$HOLDER (sleep: holds the GPU)"
same "a refused deploy changes nothing" "$P1/library" "$LIB"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
# A process with one of the library's files open is named too.
sleep 300 <"$LIB/TensileManifest.txt" &
HOLDER=$!
sleep 0.2
check "deploy refused while a library file is open" 1 ctl lib deploy --package 2
contains "the refusal names the process and the file" "$DIR/err" "$HOLDER (sleep: has TensileManifest.txt open)"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
check "deploy proceeds once it is gone" 0 ctl lib deploy --package 2
same "library = package 2's" "$P2/library" "$LIB"

# A restart keeps and reconciles the state; now deploy.sync = report.
printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000}}\n' >"$DIR/rocmd.json"
rocmd_stop
start
check "status after a restart" 0 ctl --json lib status
contains "package 2 is still deployed" "$DIR/out" '"package":[[:space:]]*2'
wait_for "no drift after the restart" 30 no_drift
sleep 2.5
rm -rf "$DIR/upd" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
wait_for "drift is reported (deploy.sync = report)" 60 has_event lib.drift "deploy.sync is report"
same "report only: the SDK update's library stays" "$T/$LIBREL" "$LIB"
check "status shows the drift" 0 ctl lib status
contains "status says the library changed" "$DIR/out" "no longer what rocmd deployed"
# The overwritten library fails verification, which rolls back to the originals.
check "verify fails on the overwritten library" 1 ctl lib verify
wait_for "a failed verify rolls back to the originals" 60 has_event lib.rolled_back "(verify)"
same "the whole /usr is the original again" "$T/usr" "$ROOT/usr"
check "history has the failed verify" 0 ctl lib history
contains "history: verify failed" "$DIR/out" "verify .*failed"

# deploy.gpu_busy = defer: a deploy waits for the GPU holder to go, then runs.
printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "gpu_busy": "defer", "defer_retry_s": 1, "smoke_timeout_ms": 20000}}\n' >"$DIR/rocmd.json"
rocmd_stop
start
sleep 300 &
HOLDER=$!
mkdir -p "$ROOT/sys/class/kfd/kfd/proc/$HOLDER"
ctl lib deploy --package 1 >"$DIR/defer.out" 2>&1 &
DEPLOYER=$!
wait_for "the deploy is deferred, naming the holder" 30 has_event lib.deferred "$HOLDER (sleep: holds the GPU)"
sleep 1.5
same "nothing is deployed while it waits" "$T/usr" "$ROOT/usr"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
if wait "$DEPLOYER"; then ok "the deferred deploy finishes once the GPU is free"; else
	bad "the deferred deploy finishes once the GPU is free"
	sed 's/^/#   /' "$DIR/defer.out"
fi
same "library = package 1's after the deferred deploy" "$P1/library" "$LIB"

# A package whose rocBLAS computes a wrong GEMM, on a machine whose HIP
# runtime (a stand-in: host memory) reports a GPU: the smoke test inside the
# transaction fails and the deploy is rolled back.
if [ -n "$FAKE_HIP" ] && [ -n "$FAKE_WRONG" ]; then
	P3=$DIR/pkg/rocm.gfx1030.V3.0.for.hip.sdk.5.7.1
	mkdir -p "$P3/library"
	cp "$P1/library/"* "$P3/library/"
	echo "package three" >"$P3/library/TensileManifest.txt"
	cp "$FAKE_WRONG" "$P3/librocblas.so.0"
	check "import the wrong package" 0 ctl pkg import "$P3"
	HIPLIB=$ROOT/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921
	rm -f "$HIPLIB" && cp "$FAKE_HIP" "$HIPLIB" # never write into the cached tree's file
	cp -a "$LIB" "$DIR/before-smoke"
	check "a deploy whose smoke test fails is refused" 1 ctl lib deploy --package 3
	contains "it says the GEMM was wrong" "$DIR/err" "GEMM smoke test failed: sgemm result wrong"
	same "the library is back as it was" "$DIR/before-smoke" "$LIB"
	check "status still shows package 1" 0 ctl --json lib status
	contains "package 1 is still the deployed one" "$DIR/out" '"package":[[:space:]]*1'
	rm -f "$HIPLIB" && cp -al "$T/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921" "$HIPLIB"
else
	echo "# skip: no stand-in HIP runtime given: the smoke-failure case is not run"
fi

# An SDK update with new files while package 1 is deployed (deploy.sync =
# report): its library is the vendor's new originals. A rollback would put
# back older ones and is refused; the next deploy keeps the earlier backup as
# backup.1 and backs up the new originals first (I1); a rollback then
# restores the update's library.
drifted() { ctl --json lib status | grep -q '"drift":[[:space:]]*true'; }
wait_for "no drift before the second update" 30 no_drift
sleep 2.5
rm -rf "$DIR/upd" "$DIR/updated" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
echo "the vendor's update" >"$DIR/upd/TensileManifest.txt"
cp -a "$DIR/upd" "$DIR/updated"
rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
wait_for "the update shows as drift" 60 drifted
check "a rollback over the SDK update is refused" 1 ctl lib rollback --to original
contains "the refusal says why" "$DIR/err" "SDK update replaced what rocmd deployed"
same "the update's library is untouched" "$DIR/updated" "$LIB"
check "deploy over the SDK update" 0 ctl lib deploy --package 1
same "library = package 1's" "$P1/library" "$LIB"
same "the update's files are the backup of the originals now" "$DIR/updated" \
	"$STATE/deploy/sdk-1/backup/library"
same "the earlier originals are kept as backup.1" "$T/$LIBREL" "$STATE/deploy/sdk-1/backup.1/library"
check "rollback to the originals" 0 ctl lib rollback --to original
same "the update's library is back" "$DIR/updated" "$LIB"
check "history" 0 ctl lib history sdk-1
contains "history: new originals backed up, earlier ones kept" "$DIR/out" "new originals .*backup.1"

# I4: nothing below a target's root is followed, and a target a user other
# than root owns is refused unless configured as such. An application's
# folder owned by nobody (uid 65534), whose user replaces its rocblas folder
# with a symlink to a root-owned folder elsewhere (a canary in it): root's
# deploy must neither write there nor delete anything.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	EVIL=$ROOT/opt/evil
	VICTIM=$ROOT/srv/victim
	mkdir -p "$EVIL/rocblas/library" "$VICTIM/library"
	cp "$T/$LIBREL/TensileLibrary_gfx803.co" "$EVIL/rocblas/library/"
	echo "root's own file" >"$VICTIM/library/canary"
	cp -a "$VICTIM" "$DIR/victim-before"
	chown -R 65534:65534 "$EVIL"
	conf_evil() {
		printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000, %s"app_targets": "evil=/opt/evil@5.7"}}\n' "$1" >"$DIR/rocmd.json"
		rocmd_stop
		start
	}
	conf_evil ""
	check "a target folder a non-admin owns is refused" 1 ctl lib deploy app-evil --package 2
	contains "the refusal names the folder and its owner" "$DIR/err" "$EVIL is owned by uid 65534"
	contains "the refusal names the key that allows it" "$DIR/err" "deploy.allow_user_owned_targets"
	same "a refused deploy leaves the user's folder as it was" "$T/$LIBREL/TensileLibrary_gfx803.co" \
		"$EVIL/rocblas/library/TensileLibrary_gfx803.co"
	# The user's move, as the user.
	as_nobody sh -c "mv '$EVIL/rocblas' '$EVIL/rocblas.mine' && ln -s '$VICTIM' '$EVIL/rocblas'"
	conf_evil '"allow_user_owned_targets": 1, '
	check "allowed, but rocblas is a symlink: refused" 1 ctl lib deploy app-evil --package 2
	contains "the refusal names the symlink" "$DIR/err" "$EVIL/rocblas is a symlink"
	same "the root-owned folder it leads to is untouched" "$DIR/victim-before" "$VICTIM"
	check "a verify is refused as well (nothing deployed there)" 1 ctl lib verify app-evil
	same "the root-owned folder is still untouched" "$DIR/victim-before" "$VICTIM"
	as_nobody sh -c "rm '$EVIL/rocblas' && mv '$EVIL/rocblas.mine' '$EVIL/rocblas'"
	check "a user's folder configured as such is deployed to" 0 ctl lib deploy app-evil --package 2
	same "its library = package 2's" "$P2/library" "$EVIL/rocblas/library"
	check "and rolled back" 0 ctl lib rollback app-evil --to original
else
	echo "# skip: the user-owned application target needs root and setpriv"
fi

# A parent of the SDK's library folder that is a symlink leading out of the
# SDK (to a folder of root's elsewhere): refused, naming it; nothing there is
# written or removed.
RB=$ROOT/usr/lib/x86_64-linux-gnu/rocblas
check "deploy package 1 before the folder moves" 0 ctl lib deploy --package 1
mv "$RB" "$DIR/outside-rocblas" && ln -s "$DIR/outside-rocblas" "$RB"
cp -a "$DIR/outside-rocblas" "$DIR/outside-before"
sleep 1.5 # the rescan of the changed folder settles
check "a deploy through a symlinked parent folder is refused" 1 ctl lib deploy --package 2
contains "the refusal names the symlink" "$DIR/err" "$RB is a symlink"
same "the folder the symlink leads to is untouched" "$DIR/outside-before" "$DIR/outside-rocblas"
check "a rollback through it is refused too" 1 ctl lib rollback --to original
contains "the rollback's refusal names the symlink" "$DIR/err" "$RB is a symlink"
same "the folder it leads to is still untouched" "$DIR/outside-before" "$DIR/outside-rocblas"
rm "$RB" && mv "$DIR/outside-rocblas" "$RB"
check "with the real folder back, the rollback runs" 0 ctl lib rollback --to original
same "library = the update's originals" "$DIR/updated" "$LIB"

# ENOSPC while the database records a deploy: failpoint db.deploy.commit
# fails the commit of its rows as a full disk does (SQLite answers
# SQLITE_FULL and rolls them back). The engine has committed, so the files
# are in place: the client must not be told a plain success, and the
# database must record it as soon as it can, without a restart.
live_is() { ctl lib status | grep "^sdk-1 " | grep -q "$1"; }
start_failing() {
	rocmd_stop
	ROCMD_FAILPOINT=db.deploy.commit:1:ENOSPC
	export ROCMD_FAILPOINT
	start
	unset ROCMD_FAILPOINT
}
start_failing
check "a deploy the database cannot record is not reported as a success" 1 ctl lib deploy --package 1
contains "the client is told what is on disk and what the database lacks" "$DIR/err" \
	"package #1 (.*) is in place at sdk-1 and verified, but the database could not record it"
lacks "no plain success" "$DIR/out" "Deployed package"
same "the files are package 1's" "$P1/library" "$LIB"
wait_for "the database records it within seconds, without a restart" 30 live_is "package #1"
check "history" 0 ctl lib history sdk-1
contains "history says it was recorded once the database could" "$DIR/out" \
	"recover .*ok .*the deploy had completed on disk"
start_failing
check "a rollback the database cannot record is not reported as a success" 1 \
	ctl lib rollback --to original
contains "the client is told the originals are in place" "$DIR/err" \
	"the originals are in place at sdk-1 and verified, but the database could not record it"
same "the files are the originals" "$DIR/updated" "$LIB"
wait_for "the database records the originals within seconds" 30 live_is "originals"

# An immutable file in the library (chattr +i, as root on this ext4): the
# next deploy goes in and is verified, but the old library cannot be removed,
# so its journal stays and every later deploy is refused; rocmctl lib
# recover says what stands in the way, and finishes the deploy once it is
# dealt with.
if [ "$(id -u)" -eq 0 ] && command -v chattr >/dev/null; then
	check "deploy package 1" 0 ctl lib deploy --package 1
	if chattr +i "$LIB/TensileManifest.txt" 2>/dev/null; then
		IMM=$(dirname "$LIB")/.rocmd-stage-sdk-1/TensileManifest.txt
		check "a deploy over an immutable file is in place" 0 ctl lib deploy --package 2
		contains "it warns that the old library stays, naming the file" "$DIR/err" \
			"$IMM cannot be removed: it or its folder is immutable"
		contains "the warning says what to run" "$DIR/err" "rocmctl lib recover sdk-1"
		same "library = package 2's" "$P2/library" "$LIB"
		check "the next deploy is refused" 1 ctl lib deploy --package 1
		contains "the refusal names the file and the chattr to run" "$DIR/err" "chattr -ia '$IMM'"
		contains "the refusal names the command that recovers" "$DIR/err" "rocmctl lib recover sdk-1"
		check "lib recover says what stands in the way" 1 ctl lib recover sdk-1
		contains "it names the file and the chattr to run" "$DIR/err" "chattr -ia '$IMM'"
		chattr -i "$IMM"
		IMM=
		check "once it is mutable, lib recover finishes the deploy" 0 ctl lib recover sdk-1
		contains "it says what it did" "$DIR/out" \
			"sdk-1: recovered sdk-1: the verified deployment of pkg 2 .* was kept and committed"
		if [ -e "$(dirname "$LIB")/.rocmd-stage-sdk-1" ]; then bad "the old library is gone"; else
			ok "the old library is gone"; fi
		same "library = package 2's after the recovery" "$P2/library" "$LIB"
		check "recovering everything again finds nothing (exit 5)" 5 ctl lib recover
		contains "it says so" "$DIR/out" "Nothing to recover"
		check "deploys work again" 0 ctl lib deploy --package 1
		same "library = package 1's" "$P1/library" "$LIB"
		check "history" 0 ctl lib history sdk-1
		contains "history has the recovery" "$DIR/out" "recover .*ok .*was kept and committed"
	else
		skip "an immutable file in the library" "this file system has no immutable attribute"
	fi
else
	skip "an immutable file in the library" "needs root and chattr"
fi
# A start-up recovery that fails: a redeploy killed just after its folder
# swap (kill point swap.folder) leaves package 2's library in place and its
# journal; the recovery at the next start fails as it swaps the folders back
# (failpoint deploy.exchange: EIO), so the journal stays and the target holds
# package 2's library. lib status must say so, not show the database's
# package 1 as deployed; lib recover then undoes the deploy.
check "deploy package 1 before the interrupted redeploy" 0 ctl lib deploy --package 1
rocmd_stop
ROCMD_KILLPOINT=swap.folder
export ROCMD_KILLPOINT
start
unset ROCMD_KILLPOINT
pid=$(ctl --json status | jnum pid)
check "a redeploy killed after its folder swap" 1 ctl lib deploy --package 2
wait_gone "$pid" 20 || bail "rocmd did not die at swap.folder"
ROCMD_FAILPOINT=deploy.exchange:1:EIO
export ROCMD_FAILPOINT
start
unset ROCMD_FAILPOINT
wait_for "the failed recovery is an event" 30 has_event lib.recover_failed "recovery of sdk-1 failed"
same "the target holds the interrupted deploy's library (package 2's)" "$P2/library" "$LIB"
check "lib status --json after the failed recovery" 0 ctl --json lib status
tr -d '\n\t ' <"$DIR/out" | grep -o '"name":"sdk-1".*' | grep -o '"deployed":\(null\|{[^}]*}\)' |
	head -n 1 >"$DIR/deployed"
contains "status: package 2, what the target holds, not the database's package 1" \
	"$DIR/deployed" '"package":2'
contains "status: that deploy is marked interrupted" "$DIR/deployed" '"interrupted":true'
contains "status names the interrupted deploy's step" "$DIR/out" '"step":[[:space:]]*"swap"'
check "lib status after the failed recovery" 0 ctl lib status
contains "the table shows package 2, interrupted" "$DIR/out" "^sdk-1 .*package #2 (interrupted)"
contains "it says the deploy was interrupted and what to run" "$DIR/out" \
	"^sdk-1: a deploy of pkg 2 .* was interrupted .*rocmctl lib recover sdk-1"
lacks "no drift is claimed for it" "$DIR/out" "no longer what rocmd deployed"
check "lib recover undoes the interrupted deploy" 0 ctl lib recover sdk-1
same "library = package 1's again" "$P1/library" "$LIB"
check "lib status --json after the recovery" 0 ctl --json lib status
contains "status: package 1" "$DIR/out" '"package":[[:space:]]*1'
lacks "status: nothing interrupted" "$DIR/out" '"interrupted"'

if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	check "nobody may recover (exit 4)" 4 as_nobody "$CTL" --socket "$SOCK" lib recover
fi

harness_done
