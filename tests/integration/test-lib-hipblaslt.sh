#!/bin/sh
# hipBLASLt beside rocBLAS and targets by ownership (issue 21), end to end:
# the real rocmd (--root on a sandbox with one gfx1030 GPU) and rocmctl on
# trees laid out as the projects ship them (docs/LAYOUTS.md):
#   - Debian's real trixie /usr (rocBLAS 5.5.1), owned by dpkg: its list in
#     var/lib/dpkg/info is the real package's file list (dpkg-deb -c);
#   - AMD's /opt/rocm-6.4.1 with hipBLASLt's flat lib/hipblaslt/library
#     (hipBLASLt's install: TensileLibrary_lazy_<gfx>.dat, TensileLibrary_*_<gfx>.co
#     and .dat, Kernels.so-000-<gfx>.hsaco, extop_<gfx>.co,
#     hipblasltExtOpLibrary.dat, hipblasltTransform.hsaco,
#     TensileLiteLibrary_lazy_Mapping.dat);
#   - a TheRock tarball whose hipBLASLt uses the per-arch subfolder
#     (lib/hipblaslt/library/<gfx>/...), built for gfx803 only;
#   - TheRock's rocm-sdk wheels in a venv, owned by pip: a RECORD with a
#     sha256 line for every file, as pip writes it.
# Code objects are Debian's real ones (their ELF headers give the arch);
# binaries rocmd only names are stand-ins.
#
# Usage: test-lib-hipblaslt.sh PATH-TO-ROCMD PATH-TO-ROCMCTL
set -u
. "$(dirname "$0")/../lib/harness.sh"
ROCMD=$1
CTL=$2
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
T=$TREES/trixie
LIBREL=usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
DEB=$(ls "$TREES"/../trixie/librocblas0_*.deb 2>/dev/null | head -n 1)
if [ ! -f "$T/$LIBREL/TensileLibrary.dat" ] || [ -z "$DEB" ] || ! command -v python3 >/dev/null; then
	echo "skip: no real SDK trees or librocblas0 package in $TREES/.. (tests/fixtures/make-trees.sh), or no python3"
	exit 77
fi
harness_init hipblaslt
ROOT=$DIR/root
CO1030=$T/$LIBREL/Kernels.so-000-gfx1030.hsaco
CO803=$T/$LIBREL/TensileLibrary_gfx803.co

stub() { for f in "$@"; do mkdir -p "$(dirname "$f")" && printf 'stand-in\n' >"$f"; done; }
library() { mkdir -p "$1" && cp -al "$T/$LIBREL"/* "$1/"; }
# hipblaslt DIR GFX CO: hipBLASLt's library files for GFX in DIR, code objects copies of CO.
hipblaslt() {
	mkdir -p "$1"
	k=TensileLibrary_HH_HH_HA_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_$2
	printf '\x82\xa4type\xa6Master\xa9libraries\x90' >"$1/TensileLibrary_lazy_$2.dat"
	printf '\x90' >"$1/$k.dat"
	printf '\x90' >"$1/hipblasltExtOpLibrary.dat"
	printf '\x80' >"$1/TensileLiteLibrary_lazy_Mapping.dat"
	for f in "$k.co" "Kernels.so-000-$2.hsaco" "extop_$2.co" hipblasltTransform.hsaco; do
		cp "$3" "$1/$f"
	done
}

# The GPU: one gfx1030.
n=$ROOT/sys/class/kfd/kfd/topology/nodes
mkdir -p "$n/0" "$n/1/mem_banks/0" "$ROOT/sys/class/kfd/kfd/proc"
printf 'cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n' >"$n/0/properties"
printf 'cpu_cores_count 0\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 100300\nvendor_id 4098\ndevice_id 29631\nlocation_id 49408\n' >"$n/1/properties"
printf 'heap_type 1\nsize_in_bytes 536870912\n' >"$n/1/mem_banks/0/properties"

# Debian's /usr, and dpkg's list of librocblas0 as dpkg writes it (every path
# of the package, "/." for the root).
mkdir -p "$ROOT"
cp -al "$T/usr" "$ROOT/usr"
mkdir -p "$ROOT/var/lib/dpkg/info"
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|; s|/$||; s|^$|/.|' >"$ROOT/var/lib/dpkg/info/librocblas0:amd64.list"
grep -q "^/$LIBREL/TensileLibrary.dat$" "$ROOT/var/lib/dpkg/info/librocblas0:amd64.list" || bail "librocblas0's list names its library"

# AMD's /opt/rocm-6.4.1: rocBLAS and hipBLASLt, both for gfx1030.
O=$ROOT/opt/rocm-6.4.1
mkdir -p "$O/.info"
printf '6.4.1-103\n' >"$O/.info/version"
stub "$O/lib/libamdhip64.so.6" "$O/lib/librocblas.so.4" "$O/lib/libhipblaslt.so.0" "$O/bin/hipcc"
library "$O/lib/rocblas/library"
hipblaslt "$O/lib/hipblaslt/library" gfx1030 "$CO1030"
# A TheRock tarball: hipBLASLt in its per-arch subfolder, for gfx803 only.
R=$ROOT/srv/therock
mkdir -p "$R/share/therock" "$R/bin"
printf '{"the_rock_commit": "0c50963448e96bb6d37fde163e573a1f148bfd5a", "rocm_version": "7.10.0", "rocm_package_version": "7.10.0a20251124"}\n' >"$R/share/therock/therock_manifest.json"
stub "$R/lib/libamdhip64.so.7" "$R/lib/librocblas.so.5" "$R/lib/libhipblaslt.so.1" "$R/bin/hipcc"
library "$R/lib/rocblas/library"
hipblaslt "$R/lib/hipblaslt/library/gfx803" gfx803 "$CO803"
# TheRock's wheels in a venv (pip-owned): the RECORD lists every file with its
# sha256 (urlsafe base64, no padding) and size, as pip's installer writes it.
SP=$ROOT/home/alice/.venv/lib/python3.12/site-packages
mkdir -p "$SP"
printf 'home = /usr/bin\nversion = 3.12.3\n' >"$ROOT/home/alice/.venv/pyvenv.cfg"
stub "$SP/_rocm_sdk_core/lib/libamdhip64.so.7" "$SP/_rocm_sdk_libraries/lib/librocblas.so.5" \
	"$SP/_rocm_sdk_libraries/lib/libhipblaslt.so.1" "$SP/rocm_sdk/__init__.py"
mkdir -p "$SP/_rocm_sdk_core/share/therock"
cp "$R/share/therock/therock_manifest.json" "$SP/_rocm_sdk_core/share/therock/"
library "$SP/_rocm_sdk_libraries/lib/rocblas/library"
hipblaslt "$SP/_rocm_sdk_libraries/lib/hipblaslt/library" gfx1030 "$CO1030"
# Hard links would tie the venv's files to Debian's: pip's files are its own.
find "$SP/_rocm_sdk_libraries" -type f -exec sh -c 'cp "$1" "$1.t" && mv "$1.t" "$1"' _ {} \;
DI=$SP/rocm_sdk_libraries-7.10.0a20251124.dist-info
mkdir -p "$DI"
printf 'Metadata-Version: 2.1\nName: rocm-sdk-libraries\nVersion: 7.10.0a20251124\n' >"$DI/METADATA"
printf 'pip\n' >"$DI/INSTALLER"
for w in rocm_sdk_core rocm_sdk_device_gfx1030; do
	mkdir -p "$SP/$w-7.10.0a20251124.dist-info"
	printf 'Metadata-Version: 2.1\nName: %s\nVersion: 7.10.0a20251124\n' "$(echo $w | tr _ -)" >"$SP/$w-7.10.0a20251124.dist-info/METADATA"
	printf '%s-7.10.0a20251124.dist-info/METADATA,,\n' "$w" >"$SP/$w-7.10.0a20251124.dist-info/RECORD"
done
# record_check SITE RECORD: every file RECORD hashes still has that hash and size.
RECORD_PY='
import base64, hashlib, os, sys
site, record, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "write":
    rows = []
    for top in ("_rocm_sdk_libraries", os.path.basename(os.path.dirname(record))):
        for d, _, files in os.walk(os.path.join(site, top)):
            for f in sorted(files):
                p = os.path.join(d, f)
                rel = os.path.relpath(p, site)
                if p == record:
                    rows.append(rel + ",,")
                    continue
                data = open(p, "rb").read()
                h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                rows.append("%s,sha256=%s,%d" % (rel, h, len(data)))
    open(record, "w").write("\n".join(rows) + "\n")
    sys.exit(0)
bad = n = 0
for line in open(record):
    rel, h, size = line.rstrip("\n").rsplit(",", 2)
    if not h:
        continue
    n += 1
    data = open(os.path.join(site, rel), "rb").read()
    got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if "sha256=" + got != h or int(size) != len(data):
        print("RECORD mismatch: " + rel)
        bad += 1
print("%d files match RECORD" % n if bad == 0 else "%d of %d files differ" % (bad, n))
sys.exit(1 if bad else 0)
'
python3 -c "$RECORD_PY" "$SP" "$DI/RECORD" write || bail "RECORD written"
grep -q "^_rocm_sdk_libraries/lib/hipblaslt/library/extop_gfx1030.co,sha256=" "$DI/RECORD" || bail "RECORD lists hipBLASLt's files"

# A package of the real files, for gfx1030 (rocBLAS only, as every package is).
P=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
mkdir -p "$P/library"
cp "$T/$LIBREL/TensileLibrary.dat" "$CO1030" "$P/library/"
echo "package one" >"$P/library/TensileManifest.txt"
# One that also carries hipBLASLt's folder (more Tensile files than rocBLAS's).
P2=$DIR/pkg/rocm.gfx1030.V4.for.hip.sdk.5.7
mkdir -p "$P2/library"
cp "$T/$LIBREL/TensileLibrary.dat" "$CO1030" "$P2/library/"
echo "package two" >"$P2/library/TensileManifest.txt"
hipblaslt "$P2/hipblaslt/library" gfx1030 "$CO1030"
# One that carries only hipBLASLt's folder (for SDK 6.4): one file more than
# the vendor's.
P3=$DIR/pkg/hipblaslt.gfx1030.V5.for.hip.sdk.6.4
hipblaslt "$P3/hipblaslt/library" gfx1030 "$CO1030"
cp "$CO1030" "$P3/hipblaslt/library/extop_gfx1030_extra.co"

printf '{"sdk": {"debounce_ms": 300, "extra_roots": "/srv/therock"}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000}}\n' >"$CONF"
rocmd_start --root "$ROOT" || bail "rocmd did not start"
wait_for "the SDKs and their libraries are found" 120 has_event sdk.library_inspected "/home/alice"
wait_for "every fingerprint computed" 120 sh -c "! \"$CTL\" --socket \"$SOCK\" --json sdk list | grep -q '\"fingerprint\":[[:space:]]*null'"

# ---- sdk list / sdk show: hipBLASLt per GPU ----
check "sdk list" 0 ctl sdk list
cat "$OUT"
contains "opt SDK: rocBLAS and hipBLASLt cover the gfx1030" "$OUT" "/opt/rocm-6.4.1 .* gfx1030 yes (hipBLASLt yes)"
contains "TheRock: hipBLASLt's per-arch folder lacks gfx1030" "$OUT" "/srv/therock .* gfx1030 yes (hipBLASLt NO)"
contains "Debian's /usr has no hipBLASLt: nothing said of it" "$OUT" "^[0-9]* */usr .* gfx1030 yes$"
check "sdk list --json" 0 ctl --json sdk list
contains "hipBLASLt's folder (opt)" "$OUT" '"dir":[[:space:]]*"/opt/rocm-6.4.1/lib/hipblaslt/library"'
contains "hipBLASLt's archs read from the per-arch subfolder" "$OUT" '"archs":[[:space:]]*\[[[:space:]]*"gfx803"[[:space:]]*\]'
check "sdk show /opt/rocm-6.4.1" 0 ctl sdk show /opt/rocm-6.4.1
contains "sdk show: hipBLASLt archs and code objects" "$OUT" "hipBLASLt archs  *gfx1030 (code objects: gfx1030)"
contains "sdk show: hipBLASLt fingerprint" "$OUT" "hipBLASLt print  *[0-9a-f]\{64\}"
contains "sdk show: GPU covered by hipBLASLt" "$OUT" "GPU gfx1030: covered by this hipBLASLt library"
check "sdk show /srv/therock" 0 ctl sdk show /srv/therock
contains "sdk show: hipBLASLt does not cover the GPU, and why" "$OUT" "GPU gfx1030: NOT covered by hipBLASLt: the hipBLASLt library has no kernels for this arch.*HIPBLAS_STATUS_INVALID_VALUE"

# ---- hipBLASLt change events: a folder that goes and comes back ----
mv "$R/lib/hipblaslt" "$DIR/therock-hipblaslt"
wait_for "hipBLASLt's folder gone is an event" 60 has_event sdk.hipblaslt_changed "hipBLASLt library of /srv/therock is gone"
mv "$DIR/therock-hipblaslt" "$R/lib/hipblaslt"
wait_for "hipBLASLt's folder back is an event" 60 has_event sdk.hipblaslt_changed "hipBLASLt library of /srv/therock appeared; covers gfx803 (/srv/therock/lib/hipblaslt/library); lacks this machine's GPU arch gfx1030"
check "sdk.hipblaslt_changed --json: its library and the one before" 0 ctl --json events --all --kind sdk.hipblaslt_changed
contains "the event's detail names the library before it" "$OUT" '"before"'

# ---- lib status: coverage of both, the route and why ----
check "import the package" 0 ctl pkg import "$P"
check "lib status" 0 ctl lib status
cat "$OUT"
contains "dpkg-owned /usr: served by its overlay" "$OUT" "^overlay-[0-9]*: route overlay: dpkg owns these files (package librocblas0:amd64 lists /$LIBREL)"
contains "user-owned /opt: in place" "$OUT" "^sdk-[0-9]*: route in place: owned by the user or the SDK's installer"
contains "pip-owned wheels: served by the overlay" "$OUT" "^overlay-[0-9]*: route overlay: pip owns these files ($(echo "${DI#$ROOT}" | sed 's/\./\\./g')/RECORD lists them)"
contains "lib status: both libraries per GPU (opt)" "$OUT" "^sdk-[0-9]*: GPU gfx1030: rocBLAS covered, hipBLASLt covered"
contains "lib status: hipBLASLt lacking the GPU (TheRock)" "$OUT" "GPU gfx1030: rocBLAS covered, hipBLASLt NOT covered"
contains "lib status: no hipBLASLt (Debian)" "$OUT" "GPU gfx1030: rocBLAS covered, hipBLASLt none"
contains "lib status: hipBLASLt deployed with rocBLAS (SDK target)" "$OUT" "hipBLASLt /opt/rocm-6.4.1/lib/hipblaslt/library (deployed with rocBLAS's when a package carries hipBLASLt's folder, else left as it is)"

# ---- a pip-owned copy: the overlay, never an overwrite ----
cp -a "$SP/_rocm_sdk_libraries" "$DIR/wheel-before"
check "deploy to the pip-owned wheels" 0 ctl lib deploy /home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries --package 1 --force sdk
cat "$OUT"
contains "deploy says why it went to the overlay" "$OUT" "Served through the overlay: pip owns these files"
contains "deploy names the variable" "$OUT" "^ROCBLAS_TENSILE_LIBPATH=$STATE/overlay/[0-9]*/library$"
contains "deploy says hipBLASLt was left as it is" "$OUT" "hipBLASLt at /home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries/lib/hipblaslt/library left as it is: the package carries no hipBLASLt library"
same "pip's files are untouched" "$DIR/wheel-before" "$SP/_rocm_sdk_libraries"
check "pip's RECORD still matches every file" 0 python3 -c "$RECORD_PY" "$SP" "$DI/RECORD" check
contains "RECORD: every hashed file checked" "$OUT" "^[0-9][0-9]* files match RECORD$"
check "lib.deployed event says so" 0 has_event lib.deployed "left as it is: the package carries no hipBLASLt library"

# ---- a dpkg-owned copy: the same ----
cp -a "$ROOT/$LIBREL" "$DIR/usr-before"
check "deploy to Debian's /usr" 0 ctl lib deploy /usr --package 1
contains "deploy says dpkg owns it" "$OUT" "Served through the overlay: dpkg owns these files (package librocblas0:amd64"
same "dpkg's files are untouched" "$DIR/usr-before" "$ROOT/$LIBREL"
# dpkg upgrades its library: that is the SDK's own update, not drift of the
# overlay rocmd serves (deploy.sync must not report or redeploy it).
printf 'rocBLAS 5.5.1+dfsg-8\n' >"$ROOT/$LIBREL/TensileManifest.txt"
wait_for "dpkg's upgrade noticed" 60 has_event sdk.library_changed "rocBLAS library of /usr changed"
check "events" 0 ctl events --all --kind lib.drift
lacks "no drift reported for the overlay-served /usr" "$OUT" "/usr"

# ---- lib verify: hipBLASLt per arch ----
cp -a "$O/lib/hipblaslt/library" "$DIR/opt-lt-orig"
check "deploy in place to the user's /opt" 0 ctl lib deploy /opt/rocm-6.4.1 --package 1 --force sdk,binary
contains "opt deploy is in place" "$OUT" "Deployed package #1 .* to sdk-[0-9]* (/opt/rocm-6.4.1/lib/rocblas/library)"
contains "opt deploy leaves hipBLASLt" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library left as it is"
same "the package is in /opt's rocBLAS folder" "$P/library" "$O/lib/rocblas/library"
OPT=$(ctl --json lib status | python3 -c 'import json,sys; print([t["name"] for t in json.load(sys.stdin)["targets"] if t.get("sdk") == "/opt/rocm-6.4.1"][0])')
check "lib verify the opt target" 0 ctl lib verify "$OPT"
contains "verify: rocBLAS covers the GPU" "$OUT" "^GPU arch gfx1030: covered$"
contains "verify: hipBLASLt checked per arch" "$OUT" "^GPU arch gfx1030: hipBLASLt covered (/opt/rocm-6.4.1/lib/hipblaslt/library, left as it is)$"
# hipBLASLt's index for the arch goes (an update that dropped it), right
# after the deploy that replaced rocBLAS beside it (whose own writes in lib/
# rocmd ignores, but not those in lib/hipblaslt/): PyTorch's
# HIPBLAS_STATUS_INVALID_VALUE case, while rocBLAS is right.
rm "$O/lib/hipblaslt/library/TensileLibrary_lazy_gfx1030.dat"
wait_for "hipBLASLt's loss noticed by a scan" 60 sh -c "\"$CTL\" --socket \"$SOCK\" sdk list | grep -q '/opt/rocm-6.4.1 .*(hipBLASLt NO)'"
wait_for "hipBLASLt's change is an event" 60 has_event sdk.hipblaslt_changed "hipBLASLt library of /opt/rocm-6.4.1 changed; covers .*(/opt/rocm-6.4.1/lib/hipblaslt/library); lacks this machine's GPU arch gfx1030"
check "lib verify after hipBLASLt lost its index for gfx1030" 0 ctl lib verify "$OPT"
contains "verify: hipBLASLt no longer covers the GPU" "$OUT" "^GPU arch gfx1030: hipBLASLt NOT covered"

# The vendor's hipBLASLt comes back (the index for gfx1030 with it).
cp "$DIR/opt-lt-orig/TensileLibrary_lazy_gfx1030.dat" "$O/lib/hipblaslt/library/"
wait_for "hipBLASLt's index back, seen by a scan" 60 sh -c "\"$CTL\" --socket \"$SOCK\" sdk list | grep -q '/opt/rocm-6.4.1 .*(hipBLASLt yes)'"
wait_for "hipBLASLt's index back is an event" 60 sh -c "\"$CTL\" --socket \"$SOCK\" events --all --kind sdk.hipblaslt_changed | grep -c 'of /opt/rocm-6.4.1 changed' | grep -qx 2"
ctl events --all --kind sdk.hipblaslt_changed | grep 'of /opt/rocm-6.4.1 changed' | tail -n 1 >"$DIR/ev-back"
contains "the second event: hipBLASLt covers again" "$DIR/ev-back" "changed; covers .*gfx1030"
lacks "the second event: no GPU arch lacking" "$DIR/ev-back" "lacks this machine's GPU arch"

# ---- a package carrying hipBLASLt's folder: both deployed, one transaction ----
check "import the package with a hipBLASLt folder" 0 ctl pkg import "$P2"
contains "import: rocBLAS's folder is the library" "$OUT" "^Library folder  *library$"
contains "import: hipBLASLt's folder named" "$OUT" "the package carries hipBLASLt's library folder hipblaslt/library: lib deploy places it on an SDK's hipBLASLt library folder with rocBLAS's"
# ---- the overlay: hipBLASLt's folder beside its library, named by
# HIPBLASLT_TENSILE_LIBPATH; pip's files never touched ----
WHEEL=/home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries
check "deploy package 2 to the pip-owned wheels" 0 ctl lib deploy "$WHEEL" --package 2 --force sdk
cat "$OUT"
contains "overlay deploy names both variables" "$OUT" "^ROCBLAS_TENSILE_LIBPATH=$STATE/overlay/[0-9]*/library HIPBLASLT_TENSILE_LIBPATH=$STATE/overlay/[0-9]*/hipblaslt/library$"
contains "overlay deploy says hipBLASLt went to the overlay" "$OUT" "hipBLASLt at $STATE/overlay/[0-9]*/hipblaslt/library deployed with it"
OV=$(sed -n 's|.*HIPBLASLT_TENSILE_LIBPATH=\(/.*\)$|\1|p' "$OUT" | head -n 1)
same "the overlay's hipBLASLt folder is package 2's" "$P2/hipblaslt/library" "$OV"
same "pip's files are still untouched" "$DIR/wheel-before" "$SP/_rocm_sdk_libraries"
check "pip's RECORD still matches every file after the hipBLASLt overlay" 0 python3 -c "$RECORD_PY" "$SP" "$DI/RECORD" check
check "lib status --json with the hipBLASLt overlay" 0 ctl --json lib status
contains "lib status: the overlay's environment names hipBLASLt's folder" "$OUT" "HIPBLASLT_TENSILE_LIBPATH=$OV"
check "deploy package 1 to the wheels again" 0 ctl lib deploy "$WHEEL" --package 1 --force sdk
contains "the overlay's hipBLASLt folder emptied" "$OUT" "the overlay's hipBLASLt folder .* emptied: the SDK's own hipBLASLt serves again"
lacks "the environment no longer names hipBLASLt's folder" "$OUT" "HIPBLASLT_TENSILE_LIBPATH=/"
same "pip's files untouched throughout" "$DIR/wheel-before" "$SP/_rocm_sdk_libraries"

# A kill between the two folders' swaps: the next start's recovery puts
# both back (rocBLAS's is package 1's, hipBLASLt's the originals).
cp -a "$O/lib/rocblas/library" "$DIR/opt-rocblas-pkg1"
rocmd_stop
ROCMD_KILLPOINT=swap.hipblaslt
export ROCMD_KILLPOINT
rocmd_start --root "$ROOT" || bail "rocmd did not start"
unset ROCMD_KILLPOINT
pid=$(ctl --json status | jnum pid)
check "a deploy killed between the rocBLAS and hipBLASLt swaps" 1 ctl lib deploy /opt/rocm-6.4.1 --package 2 --force sdk,binary
wait_gone "$pid" 20 || bail "rocmd did not die at swap.hipblaslt"
[ -f "$STATE/deploy/$OPT/journal" ] || bail "the killed deploy left its journal"
grep -q '"hipblaslt"' "$STATE/deploy/$OPT/journal" || bail "the journal names hipBLASLt's folder"
rocmd_start --root "$ROOT" || bail "rocmd did not restart"
wait_for "the start-up recovery is an event" 60 has_event lib.recovered "$OPT"
same "recovery: rocBLAS's folder is package 1's again" "$DIR/opt-rocblas-pkg1" "$O/lib/rocblas/library"
same "recovery: hipBLASLt's folder is the originals again" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
lacks "recovery: no stage or old tree left beside hipBLASLt's" "$(ls -a "$O/lib/hipblaslt" >"$DIR/ls-lt"; echo "$DIR/ls-lt")" "rocmd"
wait_for "every fingerprint computed again" 120 sh -c "! \"$CTL\" --socket \"$SOCK\" --json sdk list | grep -q '\"fingerprint\":[[:space:]]*null'"

check "dry run of package 2 to /opt" 0 ctl lib deploy /opt/rocm-6.4.1 --package 2 --force sdk,binary --dry-run
cat "$OUT"
contains "dry run lists hipBLASLt's files beside rocBLAS's" "$OUT" "^  hipBLASLt replace  TensileLibrary_lazy_gfx1030.dat"
contains "dry run: hipBLASLt's counts (by name: the vendor's files)" "$OUT" "^hipBLASLt files: 0 added, 8 replaced, 0 kept, 0 removed (by name"
contains "dry run: rocBLAS's counts beside them" "$OUT" "^rocBLAS files: "
same "the dry run left hipBLASLt's originals" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
check "deploy it to /opt" 0 ctl lib deploy /opt/rocm-6.4.1 --package 2 --force sdk,binary
cat "$OUT"
contains "deploy says hipBLASLt's folder was deployed with it" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library deployed with it: the package's hipBLASLt folder (8 files, one transaction)"
same "rocBLAS's folder is package 2's library" "$P2/library" "$O/lib/rocblas/library"
same "hipBLASLt's folder is package 2's hipBLASLt folder" "$P2/hipblaslt/library" "$O/lib/hipblaslt/library"
check "the backup holds hipBLASLt's originals" 0 test -f "$STATE/deploy/$OPT/backup/hipblaslt/TensileLibrary_lazy_gfx1030.dat"
check "lib verify: both folders checked" 0 ctl lib verify "$OPT"
contains "verify: hipBLASLt deployed and checked" "$OUT" "^GPU arch gfx1030: hipBLASLt covered (/opt/rocm-6.4.1/lib/hipblaslt/library, deployed with it, every file checked)$"
# A file of the deployed hipBLASLt changed: verify finds it, and the
# automatic rollback puts both folders' originals back.
printf 'x' >>"$O/lib/hipblaslt/library/extop_gfx1030.co"
check "lib verify finds the changed hipBLASLt file" 1 ctl lib verify "$OPT"
contains "verify names it" "$ERR" "hipblaslt/library/extop_gfx1030.co"
wait_for "the failed verification rolls back to the originals" 60 has_event lib.rolled_back "$OPT rolled back to the originals (verify)"
same "automatic rollback: hipBLASLt's originals byte for byte" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
check "deploy package 2 again" 0 ctl lib deploy /opt/rocm-6.4.1 --package 2 --force sdk,binary
same "hipBLASLt's folder is package 2's again" "$P2/hipblaslt/library" "$O/lib/hipblaslt/library"

# Package 1 (no hipBLASLt) over it: hipBLASLt goes back to its originals, never
# left holding package 2's.
check "deploy package 1 again" 0 ctl lib deploy /opt/rocm-6.4.1 --package 1 --force sdk,binary
contains "deploy says hipBLASLt is back to its originals" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library back to its originals"
same "hipBLASLt's folder: the originals, byte for byte" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
check "deploy package 2 once more" 0 ctl lib deploy /opt/rocm-6.4.1 --package 2 --force sdk,binary
same "hipBLASLt's folder is package 2's once more" "$P2/hipblaslt/library" "$O/lib/hipblaslt/library"

# Rollback to the originals: rocBLAS's and hipBLASLt's, byte for byte.
check "lib rollback --to original" 0 ctl lib rollback "$OPT" --to original
cat "$OUT"
contains "rollback says hipBLASLt is back to its originals" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library back to its originals"
same "rollback: hipBLASLt's originals byte for byte" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
# ---- a package carrying only hipBLASLt's folder: hipBLASLt replaced,
# rocBLAS left as it is ----
check "import the hipBLASLt-only package" 0 ctl pkg import "$P3"
cat "$OUT"
contains "import: no rocBLAS library, hipBLASLt's named" "$OUT" "^Library folder  *none (hipBLASLt only: hipblaslt/library)$"
contains "import: its archs read from hipBLASLt's files" "$OUT" "^Archs  *gfx1030"
contains "import: says rocBLAS stays" "$OUT" "carries only hipBLASLt's library folder hipblaslt/library .*leaves rocBLAS as it is"
P3ID=$(ctl --json pkg list | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin)["packages"] if p["name"].startswith("hipblaslt.")][0])')
check "pkg match: the hipBLASLt-only package fits SDK 6.4" 0 ctl pkg match --sdk 6.4.1 --arch gfx1030
contains "pkg match chooses it (the only 6.4 package)" "$OUT" "^#$P3ID hipblaslt\.gfx1030\.V5\.for\.hip\.sdk\.6\.4: chosen$"
check "deploy package 1 to /opt (rocBLAS is package 1's)" 0 ctl lib deploy /opt/rocm-6.4.1 --package 1 --force sdk,binary
cp -a "$O/lib/rocblas/library" "$DIR/opt-rocblas-p1"
ino=$(stat -c %i "$O/lib/rocblas/library")
check "dry run of the hipBLASLt-only package" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P3ID" --dry-run
cat "$OUT"
contains "dry run: rocBLAS left as it is" "$OUT" "rocBLAS .*left as it is"
contains "dry run: hipBLASLt's files listed" "$OUT" "hipBLASLt .*replace .*TensileLibrary_lazy_gfx1030.dat"
contains "dry run: a hipBLASLt file added" "$OUT" "hipBLASLt .*add .*extop_gfx1030_extra.co"
check "deploy the hipBLASLt-only package to /opt" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P3ID"
cat "$OUT"
contains "deploy: hipBLASLt only" "$OUT" "^Deployed package #$P3ID .* to $OPT (hipBLASLt only): 9 files"
contains "deploy says hipBLASLt was replaced and rocBLAS left" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library deployed: the package's hipBLASLt folder (9 files, one transaction); rocBLAS at /opt/rocm-6.4.1/lib/rocblas/library left as it is: the package carries no rocBLAS library"
same "hipBLASLt's folder is the package's" "$P3/hipblaslt/library" "$O/lib/hipblaslt/library"
same "rocBLAS's folder is still package 1's" "$DIR/opt-rocblas-p1" "$O/lib/rocblas/library"
check "rocBLAS's folder never swapped (same inode)" 0 test "$(stat -c %i "$O/lib/rocblas/library")" = "$ino"
check "lib.deployed says rocBLAS was left" 0 has_event lib.deployed "package #$P3ID .*rocBLAS at /opt/rocm-6.4.1/lib/rocblas/library left as it is"
check "lib status after the hipBLASLt-only deploy" 0 ctl lib status
contains "lib status: rocBLAS left as it is" "$OUT" "^$OPT: package #$P3ID: rocBLAS left as it is: the package carries no rocBLAS library$"
contains "lib status: hipBLASLt deployed" "$OUT" "^$OPT: package #$P3ID: hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library deployed"
check "lib verify: both folders checked" 0 ctl lib verify "$OPT"
contains "verify: hipBLASLt deployed and checked" "$OUT" "^GPU arch gfx1030: hipBLASLt covered (/opt/rocm-6.4.1/lib/hipblaslt/library, deployed with it, every file checked)$"
# A dry run of package 1 (rocBLAS only) over it: hipBLASLt's originals come
# back, compared by hash with what rocmd put there.
check "dry run of package 1 over the hipBLASLt-only deploy" 0 ctl lib deploy /opt/rocm-6.4.1 --package 1 --force sdk,binary --dry-run
cat "$OUT"
contains "dry run: hipBLASLt's extra file removed" "$OUT" "^  hipBLASLt remove   extop_gfx1030_extra.co"
contains "dry run: hipBLASLt's originals kept from the backup" "$OUT" "^  hipBLASLt keep .*TensileLibrary_lazy_gfx1030.dat (.*) from the backup$"
contains "dry run: what happens to hipBLASLt" "$OUT" "hipBLASLt at /opt/rocm-6.4.1/lib/hipblaslt/library back to its originals (from the backup, with rocBLAS's): the package carries no hipBLASLt library"
contains "dry run: hipBLASLt's counts, by hash" "$OUT" "^hipBLASLt files: 0 added, 0 replaced, 8 kept, 1 removed$"
same "the dry run changed nothing" "$P3/hipblaslt/library" "$O/lib/hipblaslt/library"
check "lib history names the package" 0 ctl lib history "$OPT"
contains "history: the hipBLASLt-only deploy" "$OUT" "#$P3ID"
# Rollback to the previous package (1, no hipBLASLt): hipBLASLt's originals
# back, rocBLAS still package 1's.
check "lib rollback to package 1" 0 ctl lib rollback "$OPT"
cat "$OUT"
same "rollback: hipBLASLt's originals" "$DIR/opt-lt-orig" "$O/lib/hipblaslt/library"
same "rollback: rocBLAS is package 1's" "$DIR/opt-rocblas-p1" "$O/lib/rocblas/library"
# Nothing to deploy it to: refused, nothing changed.
cp -a "$ROOT/$LIBREL" "$DIR/usr-before-lt"
check "hipBLASLt-only package to Debian's /usr (no hipBLASLt) refused" 1 ctl lib deploy /usr --package "$P3ID"
contains "refusal says why" "$ERR" "carries only hipBLASLt's library, and .* there is nothing to deploy it to"
same "Debian's files untouched" "$DIR/usr-before-lt" "$ROOT/$LIBREL"

# ---- the hipBLASLt-only package to a pip-owned copy: its overlay's own
# hipBLASLt folder, rocBLAS left the vendor's (ROCBLAS_TENSILE_LIBPATH not
# set: an empty folder named by it would leave rocBLAS without kernels) ----
check "the wheels' overlay back to the originals (emptied)" 0 ctl lib rollback "$WHEEL" --to original
check "deploy the hipBLASLt-only package to the pip-owned wheels" 0 ctl lib deploy "$WHEEL" --package "$P3ID" --force sdk
cat "$OUT"
cat "$ERR"
contains "overlay hipBLASLt-only: it names hipBLASLt's folder alone" "$OUT" "^HIPBLASLT_TENSILE_LIBPATH=$STATE/overlay/[0-9]*/hipblaslt/library$"
lacks "overlay hipBLASLt-only: no rocBLAS folder named" "$OUT" "ROCBLAS_TENSILE_LIBPATH="
contains "overlay hipBLASLt-only: says rocBLAS stays the SDK's own" "$OUT" "hipBLASLt at $STATE/overlay/[0-9]*/hipblaslt/library deployed: the package's hipBLASLt folder (9 files, one transaction); rocBLAS: the SDK's own serves (ROCBLAS_TENSILE_LIBPATH not set): the package carries no rocBLAS library"
OV3=$(sed -n 's|^HIPBLASLT_TENSILE_LIBPATH=\(/.*\)$|\1|p' "$OUT" | head -n 1)
same "the overlay's hipBLASLt folder is the hipBLASLt-only package's" "$P3/hipblaslt/library" "${OV3:-/nonexistent}"
check "the overlay's rocBLAS folder holds nothing" 0 sh -c "[ -z \"\$(ls -A '${OV3%/hipblaslt/library}/library' 2>/dev/null)\" ]"
same "pip's files untouched by the hipBLASLt-only overlay" "$DIR/wheel-before" "$SP/_rocm_sdk_libraries"
check "pip's RECORD still matches every file after the hipBLASLt-only overlay" 0 python3 -c "$RECORD_PY" "$SP" "$DI/RECORD" check
check "lib status --json with the hipBLASLt-only overlay" 0 ctl --json lib status
contains "lib status: the overlay's environment is hipBLASLt's alone" "$OUT" "\"environment\":[[:space:]]*\"HIPBLASLT_TENSILE_LIBPATH=$OV3\""
WOV=$(ctl --json lib status | python3 -c 'import json,sys; print([t["name"] for t in json.load(sys.stdin)["targets"] if t["kind"] == "overlay" and "HIPBLASLT" in t.get("environment", "")][0])')
check "lib verify the hipBLASLt-only overlay" 0 ctl lib verify "$WOV"
check "the wheels' overlay back to the originals again" 0 ctl lib rollback "$WHEEL" --to original

# ---- a hipBLASLt-only package over a backup made before the SDK had a
# hipBLASLt folder (a rocBLAS-only deploy then): hipBLASLt's originals are
# backed up as it deploys, and a rollback restores them ----
mv "$R/lib/hipblaslt" "$DIR/therock-lt-away"
wait_for "TheRock's hipBLASLt gone" 60 sh -c "\"$CTL\" --socket \"$SOCK\" events --all --kind sdk.hipblaslt_changed | grep -c 'of /srv/therock is gone' | grep -qx 2"
check "deploy package 1 to TheRock without hipBLASLt (the backup: rocBLAS's alone)" 0 ctl lib deploy /srv/therock --package 1 --force sdk,binary
TR=$(ctl --json lib status | python3 -c 'import json,sys; print([t["name"] for t in json.load(sys.stdin)["targets"] if t.get("sdk") == "/srv/therock"][0])')
check "TheRock's backup has no hipBLASLt folder" 1 test -d "$STATE/deploy/$TR/backup/hipblaslt"
settle 3 # past the grace after the deploy's own writes (SUPPRESS_GRACE_MS, 2 s, sdk-own.c): lib/ is the binary's folder
mv "$DIR/therock-lt-away" "$R/lib/hipblaslt"
wait_for "TheRock's hipBLASLt back" 60 sh -c "\"$CTL\" --socket \"$SOCK\" events --all --kind sdk.hipblaslt_changed | grep -c 'of /srv/therock appeared' | grep -qx 2"
cp -a "$R/lib/hipblaslt/library" "$DIR/therock-lt-orig"
check "dry run of the hipBLASLt-only package over that backup" 0 ctl lib deploy /srv/therock --package "$P3ID" --force sdk --dry-run
cat "$OUT"
contains "dry run: hipBLASLt's files listed over that backup" "$OUT" "hipBLASLt .*add .*extop_gfx1030_extra.co"
contains "dry run: hipBLASLt's originals to be backed up" "$OUT" "hipBLASLt's originals backed up first"
check "deploy it over that backup" 0 ctl lib deploy /srv/therock --package "$P3ID" --force sdk
cat "$OUT"
cat "$ERR"
contains "deploy: hipBLASLt's originals backed up first" "$OUT" "hipBLASLt's originals backed up first (the backup of the originals was made without them)"
same "TheRock's hipBLASLt is the package's" "$P3/hipblaslt/library" "$R/lib/hipblaslt/library"
check "the backup now holds TheRock's hipBLASLt" 0 test -f "$STATE/deploy/$TR/backup/hipblaslt/gfx803/TensileLibrary_lazy_gfx803.dat"
check "lib verify TheRock (backup included)" 0 ctl lib verify "$TR"
check "rollback TheRock to the originals" 0 ctl lib rollback "$TR" --to original
same "rollback: TheRock's hipBLASLt byte for byte" "$DIR/therock-lt-orig" "$R/lib/hipblaslt/library"
same "rollback: TheRock's rocBLAS the vendor's" "$T/$LIBREL" "$R/lib/rocblas/library"

# rocmd's own writes to hipBLASLt (five deploys, two rollbacks, a recovery)
# are recorded quietly: the two changes above stay the only events.
settle 3
ctl events --all --kind sdk.hipblaslt_changed >"$DIR/ev-all"
cat "$DIR/ev-all"
check "only the vendor's two changes are events" 0 sh -c "[ \"\$(grep -c 'of /opt/rocm-6.4.1 ' \"$DIR/ev-all\")\" -eq 2 ]"

# ---- drift: a deployed hipBLASLt file replaced from outside (as an
# application's or pip's update does: a new file renamed over it), handled
# per deploy.sync ----
replace_lt() { printf 'an update of %s\n' "$1" >"$O/lib/hipblaslt/library/.upd" &&
	mv "$O/lib/hipblaslt/library/.upd" "$O/lib/hipblaslt/library/extop_gfx1030_extra.co"; }
check "deploy the hipBLASLt-only package for the drift" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P3ID"
# Right after rocmd's own write discovery may still hold what was there
# before: that is no drift.
check "lib status --json right after the deploy" 0 ctl --json lib status
python3 -c 'import json,sys; t=[t for t in json.load(open(sys.argv[1]))["targets"] if t["name"] == sys.argv[2]][0]; print("drift", t["drift"])' "$OUT" "$OPT" >"$DIR/lt-nodrift"
contains "no drift right after rocmd's own hipBLASLt deploy" "$DIR/lt-nodrift" "^drift False$"
settle 3 # past the grace after the deploy's own writes (SUPPRESS_GRACE_MS, 2 s, sdk-own.c)
replace_lt one
wait_for "report: the replaced hipBLASLt file is drift" 60 has_event lib.drift "the hipBLASLt library of /opt/rocm-6.4.1 no longer holds what package #$P3ID rocmd deployed there (an update overwrote it); run rocmctl lib deploy --target sdk-[0-9]* --package $P3ID (deploy.sync is report)"
# lib status says so too, naming hipBLASLt (rocBLAS's folder is unchanged).
check "lib status --json after the hipBLASLt drift" 0 ctl --json lib status
python3 -c 'import json,sys; t=[t for t in json.load(open(sys.argv[1]))["targets"] if t["name"] == sys.argv[2]][0]; print("drift", t["drift"], t.get("drift_libraries"))' "$OUT" "$OPT" >"$DIR/lt-drift"
cat "$DIR/lt-drift"
contains "lib status --json: drift, in hipBLASLt's library alone" "$DIR/lt-drift" "^drift True \['hipblaslt'\]$"
check "lib status after the hipBLASLt drift" 0 ctl lib status
contains "lib status: the DRIFT column" "$OUT" "^$OPT .* YES "
contains "lib status: which library drifted" "$OUT" "^$OPT: the hipBLASLt library on disk (/opt/rocm-6.4.1/lib/hipblaslt/library) is no longer what rocmd deployed (an update?)$"
lacks "lib status: rocBLAS's library did not drift" "$OUT" "^$OPT: the rocBLAS library on disk"
check "report: nothing redeployed" 0 grep -q '^an update of one$' "$O/lib/hipblaslt/library/extop_gfx1030_extra.co"
check "lib verify names the replaced file" 1 ctl lib verify "$OPT"
contains "verify: the hipBLASLt file" "$ERR" "hipblaslt/library/extop_gfx1030_extra.co"
# The update's hipBLASLt is not rocmd's to undo, as an SDK update's rocBLAS
# is not: no automatic rollback to the older originals, and a rollback is
# refused, saying why.
wait_for "the failed verification: no rollback over the update" 60 has_event lib.drift "$OPT holds an update's new hipBLASLt library, not what rocmd deployed (.*); left as it is, no rollback to older originals"
check "the update's hipBLASLt file stays" 0 grep -q '^an update of one$' "$O/lib/hipblaslt/library/extop_gfx1030_extra.co"
same "rocBLAS's folder stays as it was (package 1's)" "$DIR/opt-rocblas-p1" "$O/lib/rocblas/library"
check "rollback to the originals over the update refused" 1 ctl lib rollback "$OPT" --to original
contains "the refusal says why" "$ERR" "an update replaced the hipBLASLt library rocmd deployed at $OPT"
check "the refused rollback changed nothing" 0 grep -q '^an update of one$' "$O/lib/hipblaslt/library/extop_gfx1030_extra.co"
rocmd_stop
printf '{"sdk": {"debounce_ms": 300, "extra_roots": "/srv/therock"}, "deploy": {"sync": "deploy", "smoke_timeout_ms": 20000}}\n' >"$CONF"
rocmd_start --root "$ROOT" || bail "rocmd did not restart"
wait_for "every fingerprint computed after the restart" 120 sh -c "! \"$CTL\" --socket \"$SOCK\" --json sdk list | grep -q '\"fingerprint\":[[:space:]]*null'"
check "deploy it again (deploy.sync is deploy)" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P3ID"
settle 3
replace_lt two
wait_for "deploy: the drift is redeployed" 60 has_event lib.drift "the hipBLASLt library of /opt/rocm-6.4.1 (/opt/rocm-6.4.1/lib/hipblaslt/library) was overwritten (an update); redeploying package #$P3ID"
wait_for "the redeploy is done" 60 has_event lib.deployed "package #$P3ID .* deployed to $OPT (drift)"
same "the redeploy put the package's hipBLASLt back" "$P3/hipblaslt/library" "$O/lib/hipblaslt/library"
same "rocBLAS's folder still package 1's" "$DIR/opt-rocblas-p1" "$O/lib/rocblas/library"
check "lib verify after the redeploy" 0 ctl lib verify "$OPT"
# The update's files are the new originals: a rollback restores them, not
# the ones the update replaced (those stay as backup.N).
wait_for "the update's hipBLASLt backed up as new originals" 30 has_event lib.backup_renewed "$OPT: new originals (an update of the hipBLASLt library)"
mkdir -p "$DIR/opt-lt-update" && cp -a "$DIR/opt-lt-orig/." "$DIR/opt-lt-update/"
printf 'an update of two\n' >"$DIR/opt-lt-update/extop_gfx1030_extra.co"
# A hipBLASLt of the vendor's own (no deploy of rocmd's there) changing is no drift.
check "back to the originals" 0 ctl lib rollback "$OPT" --to original
same "rollback after the drift redeploy: hipBLASLt is the update's" "$DIR/opt-lt-update" "$O/lib/hipblaslt/library"
same "rollback after the drift redeploy: rocBLAS the vendor's" "$T/$LIBREL" "$O/lib/rocblas/library"
settle 3
printf 'vendor update\n' >"$O/lib/hipblaslt/library/hipblasltExtOpLibrary.dat"
wait_for "the vendor's change is seen" 60 has_event sdk.hipblaslt_changed "hipBLASLt library of /opt/rocm-6.4.1 changed"
settle 3
check "no drift said of the vendor's own files" 0 sh -c "[ \"\$(\"$CTL\" --socket \"$SOCK\" events --all --kind lib.drift | grep -c hipBLASLt)\" -eq 3 ]"
cp -a "$O/lib/hipblaslt/library" "$DIR/opt-lt-vendor"
# The same for rocBLAS: a package for SDK 6.4 deployed, an update renames a
# file over one of its own, deploy.sync redeploys it, and a rollback then
# restores the update's files (hipBLASLt's stay the vendor's).
P4=$DIR/pkg/rocm.gfx1030.V6.for.hip.sdk.6.4
mkdir -p "$P4/library"
cp "$T/$LIBREL/TensileLibrary.dat" "$CO1030" "$P4/library/"
echo "package four" >"$P4/library/TensileManifest.txt"
check "import a rocBLAS package for SDK 6.4" 0 ctl pkg import "$P4"
P4ID=$(ctl --json pkg list | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin)["packages"] if p["name"].startswith("rocm.gfx1030.V6")][0])')
check "deploy it to /opt" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P4ID"
settle 3
printf 'rocBLAS update\n' >"$O/lib/rocblas/library/.upd" && mv "$O/lib/rocblas/library/.upd" "$O/lib/rocblas/library/TensileManifest.txt"
wait_for "rocBLAS's drift is redeployed" 60 has_event lib.drift "the rocBLAS library of /opt/rocm-6.4.1 was overwritten (an SDK update); redeploying package #$P4ID"
wait_for "that redeploy is done" 60 has_event lib.deployed "package #$P4ID .* deployed to $OPT (drift)"
same "the redeploy put the package's rocBLAS back" "$P4/library" "$O/lib/rocblas/library"
mkdir -p "$DIR/opt-rb-update" && cp -a "$P4/library/." "$DIR/opt-rb-update/"
printf 'rocBLAS update\n' >"$DIR/opt-rb-update/TensileManifest.txt"
check "rollback to the originals after rocBLAS's drift redeploy" 0 ctl lib rollback "$OPT" --to original
same "rollback: rocBLAS is the update's" "$DIR/opt-rb-update" "$O/lib/rocblas/library"
same "rollback: hipBLASLt still the vendor's" "$DIR/opt-lt-vendor" "$O/lib/hipblaslt/library"
# hipBLASLt's folder removed under a deploy of rocmd's (its package
# uninstalled): said, and not recreated by deploy.sync (a hipBLASLt folder
# without hipBLASLt serves nothing).
check "deploy the hipBLASLt-only package before its folder goes" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P3ID"
settle 3
ctl events --all --kind lib.drift >"$DIR/drift-before"
rm -rf "$O/lib/hipblaslt/library"
wait_for "the folder gone is said" 60 has_event lib.drift "the hipBLASLt library of /opt/rocm-6.4.1 no longer holds what package #$P3ID rocmd deployed there (its folder is gone); run rocmctl lib deploy --target sdk-[0-9]* --package $P3ID\$"
settle 3
check "the folder is not recreated" 1 test -e "$O/lib/hipblaslt/library"
check "lib status after hipBLASLt's folder went" 0 ctl lib status
contains "lib status: drift" "$OUT" "^$OPT .* YES "
contains "lib status: the deployed hipBLASLt is gone" "$OUT" "^$OPT: the hipBLASLt library rocmd deployed is gone (an update?)$"
contains "lib status: the GPU has no hipBLASLt now" "$OUT" "^$OPT: GPU gfx1030: rocBLAS covered, hipBLASLt none$"
ctl events --all --kind lib.drift >"$DIR/drift-after"
check "no redeploy queued for the folder gone" 0 sh -c "[ \"\$(grep -c redeploying \"$DIR/drift-before\")\" -eq \"\$(grep -c redeploying \"$DIR/drift-after\")\" ]"
same "rocBLAS's folder unchanged by hipBLASLt's going" "$DIR/opt-rb-update" "$O/lib/rocblas/library"
# hipBLASLt's folder appearing under a deploy of rocmd's that carries one (an
# SDK update that adds hipBLASLt, or a deploy the scan had not yet seen the
# folder for): the package's hipBLASLt is not there, so deploy.sync deploys
# it again (report: says so); before, nothing ever deployed it.
P5=$DIR/pkg/rocm.gfx1030.V7.for.hip.sdk.6.4
mkdir -p "$P5/library"
cp "$T/$LIBREL/TensileLibrary.dat" "$CO1030" "$P5/library/"
echo "package five" >"$P5/library/TensileManifest.txt"
hipblaslt "$P5/hipblaslt/library" gfx1030 "$CO1030"
echo "package five" >"$P5/hipblaslt/library/hipblasltExtOpLibrary.dat"
check "import a package for SDK 6.4 with both libraries" 0 ctl pkg import "$P5"
P5ID=$(ctl --json pkg list | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin)["packages"] if p["name"].startswith("rocm.gfx1030.V7")][0])')
check "deploy it while the SDK has no hipBLASLt folder" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P5ID"
cat "$OUT"
contains "the deploy says hipBLASLt had nowhere to go" "$OUT" "the package's hipBLASLt folder was not deployed: the target has no hipBLASLt library"
settle 3
cp -a "$DIR/opt-lt-vendor" "$O/lib/hipblaslt/library"
wait_for "deploy: the package's hipBLASLt deployed to the folder that appeared" 60 has_event lib.sync "HIP SDK /opt/rocm-6.4.1 now has a hipBLASLt library (/opt/rocm-6.4.1/lib/hipblaslt/library) and package #$P5ID, deployed there, carries one rocmd has not deployed; deploying package #$P5ID again (deploy.sync is deploy)"
wait_for "that deploy is done" 60 has_event lib.deployed "package #$P5ID .* deployed to $OPT (sync)"
same "hipBLASLt's folder is the package's" "$P5/hipblaslt/library" "$O/lib/hipblaslt/library"
same "rocBLAS's folder is the package's" "$P5/library" "$O/lib/rocblas/library"
check "lib verify after the sync deploy" 0 ctl lib verify "$OPT"
check "back to the originals after the sync deploy" 0 ctl lib rollback "$OPT" --to original
same "rollback: the vendor's hipBLASLt that appeared" "$DIR/opt-lt-vendor" "$O/lib/hipblaslt/library"
rocmd_stop
printf '{"sdk": {"debounce_ms": 300, "extra_roots": "/srv/therock"}, "deploy": {"sync": "report", "smoke_timeout_ms": 20000}}\n' >"$CONF"
rocmd_start --root "$ROOT" || bail "rocmd did not restart"
wait_for "every fingerprint computed after the second restart" 120 sh -c "! \"$CTL\" --socket \"$SOCK\" --json sdk list | grep -q '\"fingerprint\":[[:space:]]*null'"
mv "$O/lib/hipblaslt/library" "$DIR/opt-lt-away"
wait_for "hipBLASLt's folder gone again" 60 sh -c "\"$CTL\" --socket \"$SOCK\" lib status | grep -q '^$OPT: GPU gfx1030: rocBLAS covered, hipBLASLt none\$'"
check "deploy it again while the SDK has no hipBLASLt folder (report)" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P5ID"
settle 3
mv "$DIR/opt-lt-away" "$O/lib/hipblaslt/library"
wait_for "report: the missing hipBLASLt is said" 60 has_event lib.sync "HIP SDK /opt/rocm-6.4.1 now has a hipBLASLt library (/opt/rocm-6.4.1/lib/hipblaslt/library) and package #$P5ID, deployed there, carries one rocmd has not deployed; run rocmctl lib deploy --target sdk-[0-9]* --package $P5ID (deploy.sync is report)"
settle 3
same "report: the vendor's hipBLASLt left as it is" "$DIR/opt-lt-vendor" "$O/lib/hipblaslt/library"
check "deploy it as the event says" 0 ctl lib deploy /opt/rocm-6.4.1 --package "$P5ID"
same "hipBLASLt's folder is the package's after the deploy" "$P5/hipblaslt/library" "$O/lib/hipblaslt/library"
rocmd_stop

# ---- Windows: AMD's HIP SDK 6.4 installer layout (bin\hipblaslt.dll beside
# rocblas.dll, bin\hipblaslt\library, as hipBLASLt's loader looks beside its DLL) ----
W=$DIR/winroot
WS="$W/c/Program Files/AMD/ROCm/6.4"
stub "$WS/bin/amdhip64_6.dll" "$WS/bin/rocblas.dll" "$WS/bin/hipblaslt.dll" "$WS/bin/hiprtc0604.dll"
library "$WS/bin/rocblas/library"
hipblaslt "$WS/bin/hipblaslt/library" gfx1030 "$CO1030"
mkdir -p "$W/registry"
printf '{"sdk": {"debounce_ms": 300}}\n' >"$DIR/win.json"
"$ROCMD" --state-dir "$DIR/winstate" --socket "$DIR/win.sock" --config "$DIR/win.json" \
	--root "$W" --sdk-layout windows || bad "windows-layout rocmd started"
SOCK=$DIR/win.sock
wait_for "windows: the SDK's libraries inspected" 120 has_event sdk.library_inspected "6.4"
check "windows: sdk show" 0 ctl sdk show 'C:\Program Files\AMD\ROCm\6.4'
cat "$OUT"
contains "windows: hipBLASLt's folder beside its DLL" "$OUT" 'hipBLASLt library  *C:\\Program Files\\AMD\\ROCm\\6.4\\bin\\hipblaslt\\library'
contains "windows: hipBLASLt's archs read" "$OUT" "hipBLASLt archs  *gfx1030 (code objects: gfx1030)"
rocmd_stop

harness_done
