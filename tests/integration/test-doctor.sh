#!/bin/sh
# rocmctl doctor (issue 20) through the real rocmd (--root on the trixie
# sandbox of tests/fault/sandbox.sh: Debian's HIP 5.7.1 + rocBLAS 5.5.1 under
# /usr, KFD GPUs) and rocmctl. One part per run, named by PART; each breaks
# the real tree the way a user's gets broken and checks that doctor names it
# (exit 6 for an error), with its evidence and fix, and that --fix (where it
# can) repairs it through a deploy:
#   sdk      a package built for SDK 6.2 deployed with --force sdk
#            (package-sdk, fixed by deploying the matching #1); the SDK
#            upgraded in place to 5.7.2 (its changelog) with rocmd's files left
#            (sdk-upgraded, fixed by deploying again); an SDK update that
#            overwrites the deployed library with the vendor's files, leaving
#            a file only the package has (sdk-upgraded, stale-files: one
#            deploy fixes both); --fix by a non-admin is refused (exit 4)
#   gpus     a Radeon 780M (gfx1103, the iGPU, HIP device 0) beside a
#            gfx1030: the vendor's library lacks gfx1103 (gpu-arch, not
#            fixable without a package); HIP_VISIBLE_DEVICES unset
#            (hip-visible-devices names device 1); HSA_OVERRIDE_GFX_VERSION
#            10.3.0 (an error: known to crash gfx1103), 11.0.0 (a warning),
#            on Windows (no effect); ROCBLAS_TENSILE_LIBPATH missing, lacking
#            an arch, or neither the SDK's library nor its overlay
#   backup   the backup of the originals damaged (a file replaced), then
#            missing (its folder removed): named, not fixable
#   stale    a file of another arch copied into the deployed library folder
#            (stale-files), --fix deploys the package again and it is gone
#   half     package 2's binary copied over package 1's, the library left
#            (half-replaced), --fix deploys package 1 again
#   app      an application's own copy (deploy.app_targets) while the SDK has
#            the package (app-copy, --fix deploys it there), then changed by
#            an application update (app-copy)
#   maps     a running program (python3) that mapped librocblas.so.0.1 before
#            an update replaced it (a new file renamed over it, as dpkg
#            does) is named with its pid; not while it maps the current
#            file, nor once it has ended
#   runtime  SDK 5.7.1's HIP runtime replaced by one that answers the probe
#            as HIP 5.2 (a runtime package held back by a partial upgrade;
#            tests/fixtures/fake-hip.c stands in, as the real runtime cannot
#            load here): hip-runtime names it; one answering 5.7 does not
#   feeds    package #1 fetched from a signed catalogue (loopback HTTPS,
#            feed-server.py) and deployed; the catalogue then marks it bad
#            (known-bad, an error, with the remote's words), then lists a
#            bad_drivers range holding the sandbox's amdgpu 6.8.5 (an
#            error naming the driver and the range), then, the driver's
#            version gone (the kernel's own amdgpu), an info saying how to
#            see it
#   overlay  package #1 deployed to the SDK's overlay and this shell's
#            ROCBLAS_TENSILE_LIBPATH pointing at it: nothing; the SDK then
#            upgraded in place to 5.7.2 (tensile-libpath: the overlay was
#            deployed for 5.7.1); an empty folder (no Tensile library)
#   override on the stand-in vendor libraries (tests/fixtures/vendor, tune.
#            libraries) a tuned rocBLAS override live in the machine's
#            environment: nothing; its file removed (tune-override, an
#            error; --fix writes it again); the library replaced by
#            another build while rocmd runs (an error naming both digests;
#            --fix withdraws it and the environment no longer names it);
#            this shell's ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH naming no file,
#            the old library's file, and HIPBLASLT_TUNING_OVERRIDE_FILE a file
#            rocmd did not write
#
# Usage: test-doctor.sh ROCMD ROCMCTL PART [FAKE-HIP-5.2 FAKE-HIP-5.7 VENDOR-FIXTURES]
set -u
HERE=$(dirname "$0")
. "$HERE/../lib/harness.sh"
. "$HERE/../fault/sandbox.sh"
ROCMD=$1
CTL=$2
PART=$3
FAKE52=${4:-}
FAKE57=${5:-}
VENDOR=${6:-}
[ "$PART" = override ] || sandbox_check || exit 77
harness_init "doctor-$PART"
ROOT=$DIR/root
LIB=$ROOT/$LIBREL
BIN=$ROOT/$BINREL
CHILD=
on_exit() { [ -z "$CHILD" ] || kill "$CHILD" 2>/dev/null; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
[ "$PART" = override ] || sandbox_root "$ROOT"
printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000}}\n' >"$CONF"
# The checks see only this shell's variables that the test sets.
unset HSA_OVERRIDE_GFX_VERSION HIP_VISIBLE_DEVICES ROCBLAS_TENSILE_LIBPATH \
	ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH HIPBLASLT_TUNING_OVERRIDE_FILE
start() { rocmd_start --root "$ROOT" || bail "rocmd did not start"; }
import() {
	check "import package #$1 ($(basename "$2"))" 0 ctl pkg import "$2"
	contains "it is package #$1" "$OUT" "Imported package #$1 "
}
clean() { # clean NAME: doctor finds nothing, exit 0
	check "$1: doctor exits 0" 0 ctl doctor
	contains "$1: no problems" "$OUT" "^No problems found"
}
# An in-place upgrade of the SDK to 5.7.2: only the changelog the version
# comes from is new.
upgrade_572() {
	CL=$ROOT/usr/share/doc/libamdhip64-5/changelog.Debian.gz
	{
		printf 'rocm-hipamd (5.7.2-1) trixie; urgency=medium\n\n  * New upstream release.\n\n -- Test <t@example.org>  Thu, 03 Dec 2026 10:00:00 +0000\n\n'
		zcat "$CL"
	} | gzip -n >"$DIR/changelog.gz"
	rm -f "$CL" && cp "$DIR/changelog.gz" "$CL"
	check "rescan" 0 ctl sdk rescan
	wait_for "the upgrade is noticed" 30 has_event sdk.version_changed "from 5.7.1 to 5.7.2"
}

case $PART in
sdk)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one" binary
	# A file of the package that the vendor's library does not have.
	echo "tuned by the community" >"$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/library/README.package"
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V1.for.hip.sdk.6.2" "package for 6.2"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	clean "the originals"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	import 2 "$DIR/pkg/rocm.gfx1030.V1.for.hip.sdk.6.2"
	check "deploy the 6.2 package, forced" 0 ctl lib deploy --package 2 --force sdk
	check "doctor: an error, exit 6" 6 ctl doctor
	contains "package-sdk is named for sdk-1" "$OUT" "^error *package-sdk *sdk-1"
	contains "it says which SDK each is for" "$OUT" "was built for SDK 6.2, but the SDK is 5.7.1"
	contains "the evidence names the package" "$OUT" "package: id 2, name rocm.gfx1030.V1.for.hip.sdk.6.2, sdk 6.2"
	contains "the fix is the matching package" "$OUT" "fix: deploy the package that matches now, #1 .*\[--fix applies it\]"
	check "doctor --json: exit 6" 6 ctl doctor --json
	contains "json: the finding's id" "$OUT" '"id":[[:space:]]*"package-sdk"'
	contains "json: its severity" "$OUT" '"severity":[[:space:]]*"error"'
	contains "json: fixable" "$OUT" '"fixable":[[:space:]]*true'
	check "a non-admin may look" 6 as_nobody "$CTL" --socket "$SOCK" doctor
	check "a non-admin may not fix: exit 4" 4 as_nobody "$CTL" --socket "$SOCK" doctor --fix
	contains "denied, saying why" "$ERR" "permission denied"
	same "nothing changed: the 6.2 package is in place" "$DIR/pkg/rocm.gfx1030.V1.for.hip.sdk.6.2/library" "$LIB"
	check "doctor --fix" 0 ctl doctor --fix
	contains "it says what it queued" "$OUT" "done: queued a deploy of package #1 (rocm.gfx1030.V3.for.hip.sdk.5.7) to sdk-1"
	contains "it says how the deploy ended" "$OUT" "sdk-1: deploy ok: deployed package #1"
	contains "nothing is left" "$OUT" "^No problems found"
	same "the matching package is in place" "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/library" "$LIB"

	# An in-place upgrade to 5.7.2 that leaves rocmd's files.
	upgrade_572
	check "doctor after the upgrade: a warning, exit 0" 0 ctl doctor
	contains "sdk-upgraded names both versions" "$OUT" "was upgraded from 5.7.1 to 5.7.2 since package #1"
	contains "the evidence has the version at deploy time" "$OUT" "sdk_at_deploy: 5.7.1"
	check "doctor --fix deploys again" 0 ctl doctor --fix
	contains "the deploy ended well" "$OUT" "sdk-1: deploy ok"
	contains "the upgrade is dealt with" "$OUT" "^No problems found"

	# An SDK update that writes the vendor's files over the deployed library.
	cp -al --remove-destination "$T/$LIBREL/." "$LIB/"
	check "rescan after the overwrite" 0 ctl sdk rescan
	check "doctor after the overwrite" 0 ctl doctor
	contains "the SDK's own files replaced rocmd's" "$OUT" "an SDK update replaced the library rocmd had deployed at sdk-1"
	contains "the package's file the update left is named" "$OUT" "^warning *stale-files *sdk-1"
	contains "as rocmd's" "$OUT" "files: .*README.package"
	check "doctor --fix after the overwrite" 0 ctl doctor --fix
	contains "one deploy for both findings" "$OUT" "done: by the deploy queued for this target above"
	contains "the overwrite is dealt with" "$OUT" "^No problems found"
	same "the package is in place again" "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/library" "$LIB"
	check "rollback to the originals" 0 ctl lib rollback --to original
	if [ -e "$LIB/README.package" ]; then bad "the new originals leave rocmd's file out"; else ok "the new originals leave rocmd's file out"; fi
	clean "the new originals"
	;;
gpus)
	# Node 1: the Radeon 780M (gfx1103, an APU: CPU cores on the node);
	# node 2: a discrete gfx1030.
	n=$ROOT/sys/class/kfd/kfd/topology/nodes
	printf 'cpu_cores_count 8\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 110003\nvendor_id 4098\ndevice_id 5567\nlocation_id 49920\n' >"$n/1/properties"
	mkdir -p "$n/2/mem_banks/0"
	printf 'cpu_cores_count 0\nsimd_count 80\nsimd_per_cu 2\ngfx_target_version 100300\nvendor_id 4098\ndevice_id 29631\nlocation_id 768\n' >"$n/2/properties"
	printf 'heap_type 1\nsize_in_bytes 17179869184\n' >"$n/2/mem_banks/0/properties"
	mkdir -p "$ROOT/opt/other"
	cp -l "$LIB/TensileLibrary.dat" "$LIB/Kernels.so-000-gfx1030.hsaco" "$ROOT/opt/other/"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	check "doctor: an error, exit 6" 6 ctl doctor
	contains "gpu-arch names gfx1103" "$OUT" "the library at /$LIBREL has no kernels for the .* (gfx1103)"
	contains "the evidence lists the library's archs" "$OUT" "library_archs: .*gfx1030"
	contains "no package: the fix says to import one" "$OUT" "import a package built for gfx1103 and SDK 5.7.1"
	lacks "the gfx1030 is served" "$OUT" "(gfx1030): rocBLAS finds no"
	contains "HIP's device 0 is the iGPU" "$OUT" "HIP's device 0, which most programs use, is the integrated"
	contains "the fix picks device 1" "$OUT" "export HIP_VISIBLE_DEVICES=1"
	awk 'length > 100 { found = 1 } END { exit !found }' "$OUT" && ok "off a terminal a finding is one line" || bad "off a terminal a finding is one line" "$OUT"
	COLUMNS=100 check "doctor cut to COLUMNS=100" 6 ctl doctor
	awk 'length > 100 { found = 1 } END { exit found }' "$OUT" && ok "every line fits 100 columns" || bad "every line fits 100 columns" "$OUT"
	contains "the evidence still follows" "$OUT" "^    gpu_arch: gfx1103"
	# On a terminal (script(1)) the severity is coloured (red for an error);
	# under NO_COLOR or a pipe not.
	esc=$(printf '\033')
	if command -v script >/dev/null; then
		script -qec "\"$CTL\" --socket \"$SOCK\" doctor" /dev/null </dev/null >"$DIR/tty" 2>&1
		grep -q "^$esc\[1;31merror" "$DIR/tty" && ok "on a terminal an error is red" ||
			bad "on a terminal an error is red" "$DIR/tty"
		NO_COLOR=1 script -qec "\"$CTL\" --socket \"$SOCK\" doctor" /dev/null </dev/null >"$DIR/tty" 2>&1
		grep -q "$esc\[" "$DIR/tty" && bad "NO_COLOR: no colour" "$DIR/tty" || ok "NO_COLOR: no colour"
	else
		skip "colour on a terminal" "script(1) is not installed"
	fi
	grep -q "$esc\[" "$OUT" && bad "piped: no colour" "$OUT" || ok "piped: no colour"
	HIP_VISIBLE_DEVICES=1 check "with HIP_VISIBLE_DEVICES set" 6 ctl doctor
	lacks "no device-order warning" "$OUT" "hip-visible-devices"
	HSA_OVERRIDE_GFX_VERSION=10.3.0 check "HSA_OVERRIDE_GFX_VERSION=10.3.0" 6 ctl doctor
	contains "it makes HIP treat the 780M as gfx1030" "$OUT" "makes HIP treat the .* (gfx1103) as gfx1030"
	contains "an error: known to crash gfx1103" "$OUT" "10.3.0 above all, is known to crash"
	contains "the override is an error" "$OUT" "^error *hsa-override"
	HSA_OVERRIDE_GFX_VERSION=11.0.0 check "HSA_OVERRIDE_GFX_VERSION=11.0.0" 6 ctl doctor
	contains "11.0.0: a warning" "$OUT" "^warning *hsa-override"
	contains "treated as gfx1100" "$OUT" "(gfx1103) as gfx1100"
	lacks "11.0.0 is not said to crash" "$OUT" "known to crash"
	check "on Windows" 0 ctl --json call doctor.run '{"env": {"platform": "windows", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}'
	contains "no effect on Windows" "$OUT" "has no effect on Windows"
	check "a bad env param is refused" 1 ctl call doctor.run '{"env": {"PATH": "/bin"}}'
	ROCBLAS_TENSILE_LIBPATH=/nonexistent check "ROCBLAS_TENSILE_LIBPATH missing" 6 ctl doctor
	contains "it names no folder" "$OUT" "ROCBLAS_TENSILE_LIBPATH=/nonexistent names no folder"
	ROCBLAS_TENSILE_LIBPATH=/$LIBREL check "ROCBLAS_TENSILE_LIBPATH = the SDK's library" 6 ctl doctor
	contains "it lacks the 780M's arch" "$OUT" "ROCBLAS_TENSILE_LIBPATH=/$LIBREL has no kernels for the .* (gfx1103)"
	lacks "the SDK's own library is known" "$OUT" "neither an SDK's library folder"
	ROCBLAS_TENSILE_LIBPATH=/opt/other check "ROCBLAS_TENSILE_LIBPATH elsewhere" 6 ctl doctor
	contains "it is not the SDK's" "$OUT" "ROCBLAS_TENSILE_LIBPATH=/opt/other is neither an SDK's library folder nor its overlay"
	# The discrete GPU on the first node: HIP's device 0 is no iGPU then.
	rocmd_stop
	mv "$n/1/properties" "$DIR/igpu" && mv "$n/2/properties" "$n/1/properties" && mv "$DIR/igpu" "$n/2/properties"
	start
	no_igpu_first() { ctl doctor >"$OUT" 2>&1; ! grep -q "hip-visible-devices" "$OUT"; }
	wait_for "with the dGPU first (KFD node order), no device-order warning" 30 no_igpu_first
	contains "the 780M still lacks its arch" "$OUT" "(gfx1103): rocBLAS finds no"
	;;
backup)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one" binary
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	check "deploy" 0 ctl lib deploy
	clean "after the deploy"
	B=$STATE/deploy/sdk-1/backup
	f=$B/library/TensileLibrary_gfx803.co
	[ -f "$f" ] || bail "the backup holds $f"
	rm -f "$f" && echo "not the vendor's" >"$f"
	check "doctor: a damaged backup, exit 6" 6 ctl doctor
	contains "it is damaged" "$OUT" "^error *backup *sdk-1"
	contains "the file is named" "$OUT" "first library/TensileLibrary_gfx803.co"
	lacks "not fixable" "$OUT" "\[--fix applies it\]"
	rm -rf "$B"
	check "doctor: a missing backup, exit 6" 6 ctl doctor
	contains "it is missing" "$OUT" "original rocBLAS is missing"
	;;
stale)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one" binary
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	check "deploy" 0 ctl lib deploy
	clean "after the deploy"
	cp "$T/$LIBREL/TensileLibrary_gfx803.co" "$LIB/"
	check "doctor: a stale file, a warning" 0 ctl doctor
	contains "stale-files for sdk-1" "$OUT" "^warning *stale-files *sdk-1"
	contains "the file is named" "$OUT" "files: TensileLibrary_gfx803.co"
	check "doctor --fix" 0 ctl doctor --fix
	contains "it deploys the package again" "$OUT" "done: queued a deploy of package #1"
	contains "nothing is left" "$OUT" "^No problems found"
	if [ -e "$LIB/TensileLibrary_gfx803.co" ]; then bad "the stale file is gone"; else ok "the stale file is gone"; fi
	same "the folder is the package's" "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/library" "$LIB"
	;;
half)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one" binary
	# Package 2's binary is another build (one byte more).
	P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
	sandbox_pkg "$P2" "package two"
	cat "$T/$BINREL" >"$P2/librocblas.so.0" && printf x >>"$P2/librocblas.so.0"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	import 2 "$P2"
	check "deploy package 1" 0 ctl lib deploy --package 1
	clean "after the deploy"
	# A user copies package 2's binary over, the library left as it is.
	cp "$P2/librocblas.so.0" "$BIN.new" && mv "$BIN.new" "$BIN"
	check "doctor: half-replaced, exit 6" 6 ctl doctor
	contains "half-replaced for sdk-1" "$OUT" "^error *half-replaced *sdk-1"
	contains "it names the binary and the package" "$OUT" "the rocBLAS binary /$BINLINK is not the one deployed with the library at /$LIBREL (package #1"
	check "doctor --fix" 0 ctl doctor --fix
	contains "it deploys package 1 again" "$OUT" "done: queued a deploy of package #1"
	contains "nothing is left" "$OUT" "^No problems found"
	if cmp -s "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/librocblas.so.0" "$BIN"; then
		ok "the binary is package 1's again"
	else bad "the binary is package 1's again"; fi
	;;
app)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one" binary
	# An application's private copy (as ollama ships one), managed as app-ollama.
	APP=$ROOT/opt/ollama/lib/ollama/rocm
	mkdir -p "$APP/rocblas/library"
	cp -l "$LIB/TensileLibrary.dat" "$LIB/Kernels.so-000-gfx1030.hsaco" "$APP/rocblas/library/"
	printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000, "app_targets": "ollama=/opt/ollama/lib/ollama/rocm@5.7"}}\n' >"$CONF"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	clean "nothing deployed yet"
	check "deploy to the SDK" 0 ctl lib deploy sdk-1
	check "doctor: the application's copy, a warning" 0 ctl doctor
	contains "app-copy for app-ollama" "$OUT" "^warning *app-copy *app-ollama"
	contains "it says the application loads its own" "$OUT" "the application's own rocBLAS at /opt/ollama/lib/ollama/rocm/rocblas/library is not package #1"
	check "doctor --fix" 0 ctl doctor --fix
	contains "it deploys the package to the application" "$OUT" "done: queued a deploy of package #1 (rocm.gfx1030.V3.for.hip.sdk.5.7) to app-ollama"
	contains "nothing is left" "$OUT" "^No problems found"
	same "the application's copy is the package's" "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7/library" "$APP/rocblas/library"
	# An application update brings its own file back.
	rm -f "$APP/rocblas/library/TensileManifest.txt"
	echo "the application's" >"$APP/rocblas/library/TensileManifest.txt"
	check "doctor: the copy changed" 0 ctl doctor
	contains "it differs from the package" "$OUT" "copy at /opt/ollama/lib/ollama/rocm/rocblas/library differs from package #1"
	contains "the file is named" "$OUT" "TensileManifest.txt"
	;;
maps)
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	python3 -c 'import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
f.close()
print("mapped", flush=True)
time.sleep(600)' "$BIN" >"$DIR/child.out" &
	CHILD=$!
	wait_for "the program maps librocblas.so.0.1" 10 grep -q mapped "$DIR/child.out"
	clean "while it maps the current file"
	# An update replaces the binary the dpkg way: a new file renamed over it.
	cp "$T/$BINREL" "$BIN.new" && mv "$BIN.new" "$BIN"
	check "doctor: the old library mapped, a warning" 0 ctl doctor
	contains "it names the pid and program" "$OUT" "$CHILD (python3)"
	contains "it says why it matters" "$OUT" "still runs the rocBLAS that was at /$BINLINK\|still runs the rocBLAS that was at /$BINREL"
	contains "the fix is a restart" "$OUT" "fix: restart them"
	kill "$CHILD"
	wait_gone "$CHILD"
	CHILD=
	clean "once it has ended"
	;;
runtime)
	[ -f "$FAKE52" ] && [ -f "$FAKE57" ] || bail "no stand-in runtimes given"
	HIPLIB=$ROOT/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921
	[ -f "$HIPLIB" ] || bail "the tree has $HIPLIB"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	clean "HIP's own runtime (it does not load here: no version)"
	# A partial upgrade: the runtime package held back at 5.2 under SDK 5.7.1.
	rm -f "$HIPLIB" && cp "$FAKE52" "$HIPLIB" # never write into the cached tree's file
	probed() { ctl sdk rescan >/dev/null 2>&1 && ctl --json sdk list | grep -q "\"hip_runtime_version\":[[:space:]]*$1"; }
	wait_for "the probe reports HIP 5.2" 30 probed 50221151
	check "doctor: a warning, exit 0" 0 ctl doctor
	contains "hip-runtime for sdk-1" "$OUT" "^warning *hip-runtime *sdk-1"
	contains "it names the runtime and both versions" "$OUT" "the HIP runtime that serves the GPUs, /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 (the SDK's own, HIP 5.2), is older than SDK 5.7.1 at /usr"
	contains "the evidence has the runtime's version" "$OUT" "hip_runtime: path /usr/lib/x86_64-linux-gnu/libamdhip64.so.5, source sdk, version 50221151"
	contains "the driver is unknown, and how to see it is said" "$OUT" "amdgpu_driver: unknown (no /sys/module/amdgpu/version"
	contains "the fix is the runtime of the SDK's release" "$OUT" "fix: install the HIP runtime of SDK 5.7.1's own release"
	check "doctor --json" 0 ctl doctor --json
	contains "json: the finding's id" "$OUT" '"id":[[:space:]]*"hip-runtime"'
	rm -f "$HIPLIB" && cp "$FAKE57" "$HIPLIB"
	wait_for "the probe reports HIP 5.7" 30 probed 50731921
	clean "a runtime of the SDK's own release"
	rm -f "$HIPLIB" && cp -al "$T/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921" "$HIPLIB"
	;;
feeds)
	command -v python3 >/dev/null && command -v zip >/dev/null && command -v openssl >/dev/null ||
		{ skip "feeds" "python3, zip or openssl is not installed"; harness_done; exit 0; }
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
	SRV=$DIR/srv
	NAME=rocm.gfx1030.V3.for.hip.sdk.5.7.zip
	mkdir -p "$SRV/files" "$SRV/cat" "$DIR/remotes.d" "$ROOT/sys/module/amdgpu"
	# The amdgpu driver as AMD's amdgpu-dkms module says it.
	printf '6.8.5\n' >"$ROOT/sys/module/amdgpu/version"
	sandbox_pkg "$DIR/p1" "package one" binary
	(cd "$DIR/p1" && zip -0 -qr "$SRV/files/$NAME" .) || bail "zip the package"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$DIR/key.pem" \
		-out "$DIR/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
		bail "a certificate for 127.0.0.1"
	openssl genpkey -algorithm ed25519 -out "$DIR/k1.pem" 2>/dev/null || bail "the catalogue's key"
	K1=$(openssl pkey -in "$DIR/k1.pem" -pubout -outform DER | tail -c 32 | base64 -w0)
	python3 "$HERE/feed-server.py" "$SRV" "$DIR/cert.pem" "$DIR/key.pem" "$DIR/port" "$DIR/requests" 100 $((400 * WAIT_SCALE)) \
		>"$DIR/server.log" 2>&1 &
	CHILD=$!
	wait_until 10 test -s "$DIR/port" || bail "the server did not start" "$DIR/server.log"
	U=https://127.0.0.1:$(cat "$DIR/port")
	A=$SRV/files/$NAME
	catalogue() { # catalogue [EXTRA]: the package, with EXTRA's keys, signed
		printf '{"format": 1, "packages": [{"name": "%s", "version": "V3", "sdk": ["5.7"], "platforms": ["linux"], "archs": ["gfx1030"], "url": "%s/files/%s", "size": %s, "sha256": "%s"%s}]}\n' \
			"$NAME" "$U" "$NAME" "$(wc -c <"$A" | tr -d ' ')" "$(sha256sum "$A" | cut -d' ' -f1)" "${1:-}" \
			>"$SRV/cat/catalogue.json"
		openssl pkeyutl -sign -rawin -inkey "$DIR/k1.pem" -in "$SRV/cat/catalogue.json" -out "$DIR/sig.bin" &&
			base64 -w0 "$DIR/sig.bin" >"$SRV/cat/catalogue.json.sig"
	}
	catalogue
	printf 'kind = catalogue\nurl = %s/cat/catalogue.json\nkey = ed25519:%s\n' "$U" "$K1" >"$DIR/remotes.d/cat.conf"
	printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000}, "pkg": {"remotes_dir": "%s/remotes.d", "ca_bundle": "%s/cert.pem"}}\n' \
		"$DIR" "$DIR" >"$CONF"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	check "pkg refresh" 0 ctl pkg refresh
	check "pkg fetch" 0 ctl pkg fetch "$NAME"
	wait_for "it is imported from the feed" 60 has_event pkg.imported "$NAME"
	check "deploy it" 0 ctl lib deploy
	clean "the catalogue has nothing against it"
	# The catalogue's maintainer marks it bad.
	catalogue ', "bad": "its gfx1030 kernels give wrong results"'
	check "pkg refresh: the package marked bad" 0 ctl pkg refresh
	check "doctor: an error, exit 6" 6 ctl doctor
	contains "known-bad for sdk-1" "$OUT" "^error *known-bad *sdk-1"
	contains "it names the package, the remote and why" "$OUT" "package #1 ($NAME), deployed at sdk-1, is marked bad by remote cat: its gfx1030 kernels give wrong results"
	contains "no other package: roll back" "$OUT" "fix: roll back to the vendor.s library (rocmctl lib rollback --to original) or deploy another package (rocmctl pkg available --sdk 5.7.1 --arch gfx1030 lists"
	lacks "not fixable" "$OUT" "\[--fix applies it\]"
	# Then only a driver range, holding the running 6.8.5.
	catalogue ', "bad_drivers": [{"from": "6.8", "to": "6.8.9", "why": "hangs the GPU"}]'
	check "pkg refresh: a bad driver range" 0 ctl pkg refresh
	check "doctor: the driver in the range, exit 6" 6 ctl doctor
	contains "it names the driver and the range" "$OUT" "is marked bad for this driver by remote cat: the installed amdgpu driver 6.8.5 is in its bad range 6.8 to 6.8.9: hangs the GPU"
	contains "the evidence has the driver" "$OUT" "amdgpu_driver: 6.8.5"
	# The kernel's own amdgpu: its version is unknown.
	rm -f "$ROOT/sys/module/amdgpu/version"
	no_driver() { ctl sdk rescan >/dev/null 2>&1 && ctl --json gpu list | grep -q '"amdgpu_version":[[:space:]]*""'; }
	wait_for "the driver's version is gone" 30 no_driver
	check "doctor: an info, exit 0" 0 ctl doctor
	contains "an info for sdk-1" "$OUT" "^info *known-bad *sdk-1"
	contains "it says the driver is unknown" "$OUT" "this driver's version is unknown, so rocmd cannot tell whether it is one of them"
	contains "and how to see it" "$OUT" "amdgpu_driver: unknown (no /sys/module/amdgpu/version"
	contains "the ranges are shown" "$OUT" "bad_drivers: from 6.8, to 6.8.9, why hangs the GPU"
	;;
overlay)
	sandbox_pkg "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7" "package one"
	start
	wait_for "the SDK's library is inspected" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	check "deploy to the overlay" 0 ctl lib deploy --overlay
	OV=$STATE/overlay/1/library
	contains "it says what to set" "$OUT" "^ROCBLAS_TENSILE_LIBPATH=$OV$"
	ROCBLAS_TENSILE_LIBPATH=$OV clean "ROCBLAS_TENSILE_LIBPATH = the overlay"
	# An in-place upgrade to 5.7.2, the overlay left as it is.
	upgrade_572
	ROCBLAS_TENSILE_LIBPATH=$OV check "doctor: the overlay of the old SDK, a warning" 0 ctl doctor
	contains "tensile-libpath names it" "$OUT" "^warning *tensile-libpath"
	contains "it says for which SDK it was deployed" "$OUT" "ROCBLAS_TENSILE_LIBPATH=$OV is the overlay of SDK /usr; package #1 (rocm.gfx1030.V3.for.hip.sdk.5.7) in it was deployed there for SDK 5.7.1, but the SDK at /usr is 5.7.2 now"
	contains "the fix is a deploy to the overlay" "$OUT" "fix: deploy the package that matches the SDK now to the overlay: rocmctl lib deploy --overlay"
	check "deploy to the overlay again" 0 ctl lib deploy --overlay
	ROCBLAS_TENSILE_LIBPATH=$OV clean "the overlay deployed for 5.7.2"
	mkdir -p "$ROOT/opt/empty"
	ROCBLAS_TENSILE_LIBPATH=/opt/empty check "ROCBLAS_TENSILE_LIBPATH = an empty folder" 6 ctl doctor
	contains "it is no Tensile library" "$OUT" "ROCBLAS_TENSILE_LIBPATH=/opt/empty is a folder but no Tensile library"
	;;
override)
	[ -x "$VENDOR/standin-app" ] || { skip "override" "no stand-in libraries"; harness_done; exit 0; }
	L=$DIR/lib
	ENVD=$ROOT/etc/environment.d/60-rocmd-tune.conf
	RCSV=$STATE/tune-overrides/lib-rocblas-1/rocblas.csv
	mkdir -p "$ROOT/proc" "$ROOT/etc" "$L"
	cp -a "$VENDOR/sysroot/sys" "$ROOT/sys"
	mkdir -p "$ROOT/sys/class/kfd/kfd/proc"
	echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
	cp -a "$VENDOR/sdk-a/lib/." "$L/"
	cat >"$CONF" <<JSON
{"tune": {"idle_s": 2, "check_ms": 200, "budget": 40, "backend": "cpu", "max_cpu_load": 400,
 "families": 0, "enabled": 0, "libraries": "rocblas:$L/librocblas.so.4"}}
JSON
	start
	echo './rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 256 -n 16 -k 256 --alpha 1 --a_type f16_r --lda 256 --b_type f16_r --ldb 256 --beta 0 --c_type f16_r --ldc 256 --d_type f16_r --ldd 256 --compute_type f32_r --algo 0 --solution_index 0 --flags 0' >"$DIR/bench.log"
	check "queue one rocBLAS shape" 0 ctl tune import-log "$DIR/bench.log"
	check "tune start" 0 ctl tune start
	wait_for "the override is live in the machine's environment" 120 grep -q "^ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV$" "$ENVD"
	clean "the override of the library there"
	check "tune pause" 0 ctl tune pause
	# The file removed (by hand, or a cleaner of /var).
	rm -f "$RCSV"
	check "doctor: the file is gone, an error" 6 ctl doctor
	contains "tune-override names the variable and the file" "$OUT" "^error *tune-override"
	contains "it says no file is there" "$OUT" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV, in $ENVD, names no file"
	contains "fixable" "$OUT" "fix: run rocmd's override recovery (--fix does.*\[--fix applies it\]"
	check "a non-admin may not fix: exit 4" 4 as_nobody "$CTL" --socket "$SOCK" doctor --fix
	check "doctor --fix" 0 ctl doctor --fix
	contains "it says what the recovery left" "$OUT" "done: ran rocmd's override recovery: lib-rocblas-1's rocblas override is live now (1 entry), and the machine's environment names it"
	lacks "no deploy to report: no Fixes heading" "$OUT" "^Fixes:"
	check "the file is written again" 0 test -f "$RCSV"
	clean "after the fix"
	# Another build of the library replaces it while rocmd runs (no SDK
	# event tells the tuner: tune.libraries is no SDK).
	# A user's copy of it (this shell's paths are the sandbox's: under ROOT).
	mkdir -p "$ROOT/home/u"
	cp "$RCSV" "$ROOT/home/u/old.csv"
	cp "$VENDOR/sdk-b/lib/librocblas.so.4" "$L/librocblas.so.4.new"
	mv "$L/librocblas.so.4.new" "$(readlink -f "$L/librocblas.so.4")"
	cp "$VENDOR/sdk-b/lib/rocblas/library/"* "$L/rocblas/library/"
	check "doctor: measured on another library, an error" 6 ctl doctor
	contains "it says which library it was measured on" "$OUT" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV, in $ENVD, was measured on librocblas.so.4 sha256 [0-9a-f]\{12\}, but rocblas at $L/librocblas.so.4 is another build now"
	contains "the evidence has both digests" "$OUT" "library_now: [0-9a-f]\{64\}"
	ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=/home/u/old.csv check "this shell: a copy of the old override" 6 ctl doctor
	contains "the copy in this shell is named too" "$OUT" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=/home/u/old.csv, in this shell's environment, was measured on librocblas.so.4"
	check "doctor --fix" 0 ctl doctor --fix
	contains "the override is withdrawn" "$OUT" "done: ran rocmd's override recovery: lib-rocblas-1's rocblas override is withdrawn now (0 entries: the library changed"
	contains "and no longer named" "$OUT" "and the machine's environment no longer names it"
	lacks "the environment names it no more" "$ENVD" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH"
	clean "after the withdrawal"
	ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=/nonexistent.csv check "this shell: no such file, a warning" 0 ctl doctor
	contains "it names no file" "$OUT" "^warning *tune-override"
	contains "in this shell" "$OUT" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=/nonexistent.csv, in this shell's environment, names no file"
	lacks "not fixable by rocmd" "$OUT" "\[--fix applies it\]"
	echo "T,N,64,4,1,128,1,0,128,128,64,f16_r,f16_r,f32_r,3" >"$ROOT/home/u/mine.txt"
	HIPBLASLT_TUNING_OVERRIDE_FILE=/home/u/mine.txt check "this shell: a file rocmd did not write, an info" 0 ctl doctor
	contains "it says doctor cannot tell" "$OUT" "^info *tune-override"
	contains "and why" "$OUT" "is not an override rocmd wrote (it has no identity line)"
	;;
*)
	bail "unknown part $PART"
	;;
esac
rocmd_stop
harness_done "$PART"
