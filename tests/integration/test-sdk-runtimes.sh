#!/bin/sh
# Discovery of ROCm outside SDK installs (issue 21), end to end: the real
# rocmd (--root on a sandbox, both --sdk-layout values) and rocmctl, on trees
# laid out file for file as each project's packaging makes them
# (docs/LAYOUTS.md): TheRock tarballs under sdk.extra_roots and $ROCM_PATH /
# $HIP_PATH, TheRock's rocm-sdk wheels in a venv, a PyTorch ROCm wheel in a
# conda environment and under sdk.runtime_roots, ollama, LM Studio and
# llama.cpp runtimes. Every rocBLAS library is Debian's real trixie one
# (make-trees.sh), so archs are read from its TensileLibrary.dat and code
# objects; binaries rocmd only names (runtimes, rocBLAS) are stand-ins.
#
# Usage: test-sdk-runtimes.sh PATH-TO-ROCMD PATH-TO-ROCMCTL
set -u
. "$(dirname "$0")/../lib/harness.sh"
ROCMD=$1
CTL=$2
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
LIB=$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ ! -f "$LIB/TensileLibrary.dat" ]; then
	echo "skip: no real SDK trees in $TREES (tests/fixtures/make-trees.sh could not download Debian's packages)"
	exit 77
fi
harness_init runtimes

scans() { ctl --json sdk list | sed -n 's/.*"scans":[[:space:]]*\([0-9]*\).*/\1/p'; }
inspections() { ctl --json sdk list | sed -n 's/.*"inspections":[[:space:]]*\([0-9]*\).*/\1/p'; }
scanned() { [ "$(inspections)" -ge "$1" ] 2>/dev/null && [ "$(scans)" -le "$(inspections)" ]; }

# library DIR: Debian's real rocBLAS library folder at DIR (hard links).
library() {
	mkdir -p "$1"
	cp -al "$LIB"/* "$1/"
}
stub() { for f in "$@"; do mkdir -p "$(dirname "$f")" && printf 'stand-in\n' >"$f"; done; }
# manifest DIR VERSION: TheRock's share/therock files (generate_therock_manifest.py's
# keys, dist_info.json's dist_amdgpu_targets).
manifest() {
	mkdir -p "$1/share/therock"
	printf '{"the_rock_commit": "0c50963448e96bb6d37fde163e573a1f148bfd5a", "rocm_version": "%s", "rocm_package_version": "%s", "submodules": [], "flags": {"KPACK_SPLIT_ARTIFACTS": true}}\n' \
		"$(echo "$2" | sed 's/\(rc\|a\).*//')" "$2" >"$1/share/therock/therock_manifest.json"
	printf '{"dist_amdgpu_targets": "gfx1100;gfx1101;gfx1102;gfx1103"}\n' >"$1/share/therock/dist_info.json"
}
# kpack FILE ARCH BLOB: a .kpack archive as rocm-kpack's PackedKernelArchive writes it
# (python/rocm_kpack/kpack.py): "KPAK", format version 1 and the TOC's offset
# (little-endian), BLOB (a real code object) at offset 64, then the MessagePack TOC
# naming it as lib/librocblas.so.5's kernel for ARCH.
byte() { printf "\\$(printf '%03o' "$1")"; }
le() { _v=$1; _i=0; while [ $_i -lt "$2" ]; do byte $((_v % 256)); _v=$((_v / 256)); _i=$((_i + 1)); done; }
u32be() { byte 0xce; byte $(($1 >> 24 & 255)); byte $(($1 >> 16 & 255)); byte $(($1 >> 8 & 255)); byte $(($1 & 255)); }
mstr() { byte $((0xa0 + ${#1})); printf '%s' "$1"; }
kpack() {
	_size=$(wc -c <"$3")
	{
		printf 'KPAK'
		le 1 4
		le $((64 + _size)) 8
		le 0 48
		cat "$3"
		byte $((0x80 + 7))
		mstr format_version; byte 1
		mstr group_name; mstr blas
		mstr gfx_arch_family; mstr "$(echo "$2" | sed 's/.$/X/')"
		mstr gfx_arches; byte $((0x91)); mstr "$2"
		mstr compression_scheme; mstr none
		mstr blobs; byte $((0x91)); byte $((0x82)); mstr offset; byte 64; mstr size; u32be "$_size"
		mstr toc; byte $((0x81)); mstr lib/librocblas.so.5; byte $((0x81)); mstr "$2"
		byte $((0x82)); mstr type; mstr hsaco; mstr ordinal; byte 0
	} >"$1"
}
# dist_info SITE NAME VERSION: a wheel's .dist-info folder as pip installs it.
dist_info() {
	d=$1/$2-$3.dist-info
	mkdir -p "$d"
	printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$(echo "$2" | tr _ -)" "$3" >"$d/METADATA"
	printf 'pip\n' >"$d/INSTALLER"
	printf '%s-%s.dist-info/METADATA,,\n' "$2" "$3" >"$d/RECORD"
}

# torch_version DIR VERSION HIP: torch/version.py as PyTorch's
# tools/generate_torch_version.py writes it.
torch_version() {
	{
		printf 'from typing import Optional\n\n'
		printf "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
		printf "__version__ = '%s'\ndebug = False\ncuda: Optional[str] = None\n" "$2"
		printf "git_version = '1c7aa1ff9d3bd4d45fc1b2a5e1bb3e1a8d0d8f59'\n"
		printf "hip: Optional[str] = '%s'\n" "$3"
	} >"$1/version.py"
}

# ---- Linux ----
ROOT=$DIR/root
# A TheRock tarball (therock-dist-linux-gfx110X-all-7.10.0a20251124.tar.gz) unpacked
# under a configured root, and another (7.9.0rc1) where $ROCM_PATH points.
therock_linux() {
	t=$1
	mkdir -p "$t/bin" "$t/include/hip" "$t/.kpack"
	stub "$t/bin/hipcc" "$t/lib/libamdhip64.so.7" "$t/lib/librocblas.so.5" \
		"$t/lib/libhipblaslt.so.1" "$t/lib/hipblaslt/library/TensileLibrary_lazy_gfx1100.dat"
	kpack "$t/.kpack/blas_lib_gfx803.kpack" gfx803 "$LIB/TensileLibrary_gfx803.co"
	kpack "$t/.kpack/blas_lib_gfx1030.kpack" gfx1030 "$LIB/Kernels.so-000-gfx1030.hsaco"
	library "$t/lib/rocblas/library"
	manifest "$t" "$2"
}
therock_linux "$ROOT/srv/therock" 7.10.0a20251124
therock_linux "$ROOT/tools/rock" 7.9.0rc1
# TheRock's wheels in a venv: rocm, rocm-sdk-core, rocm-sdk-libraries, rocm-sdk-device-gfx1103.
SP=$ROOT/home/alice/.venv/lib/python3.12/site-packages
mkdir -p "$SP"
printf 'home = /usr/bin\nversion = 3.12.3\n' >"$ROOT/home/alice/.venv/pyvenv.cfg"
stub "$SP/_rocm_sdk_core/lib/libamdhip64.so.7" "$SP/_rocm_sdk_core/bin/hipcc" \
	"$SP/_rocm_sdk_libraries/lib/librocblas.so.5" "$SP/_rocm_sdk_libraries/lib/libhipblaslt.so.1" \
	"$SP/_rocm_sdk_libraries/lib/hipblaslt/library/TensileLibrary_lazy_gfx1103.dat" \
	"$SP/rocm_sdk/__init__.py"
manifest "$SP/_rocm_sdk_core" 7.10.0a20251124
library "$SP/_rocm_sdk_libraries/lib/rocblas/library"
for w in rocm rocm_sdk_core rocm_sdk_libraries rocm_sdk_device_gfx1103; do dist_info "$SP" $w 7.10.0a20251124; done
# A PyTorch ROCm wheel (torch-2.5.1+rocm6.2) in a conda environment.
TP=$ROOT/home/alice/miniconda3/envs/comfy/lib/python3.11/site-packages
mkdir -p "$ROOT/home/alice/miniconda3/envs/comfy/conda-meta"
stub "$TP/torch/lib/libamdhip64.so" "$TP/torch/lib/librocblas.so" "$TP/torch/lib/libhipblaslt.so" \
	"$TP/torch/lib/libtorch_hip.so" "$TP/torch/__init__.py" \
	"$TP/torch/lib/hipblaslt/library/TensileLibrary_lazy_gfx1100.dat"
library "$TP/torch/lib/rocblas/library"
torch_version "$TP/torch" 2.5.1+rocm6.2 6.2.41133-dd7f95766
dist_info "$TP" torch 2.5.1+rocm6.2
# A CPU torch in another venv: no rocBLAS, not listed.
stub "$ROOT/home/alice/venv-cpu/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so"
: >"$ROOT/home/alice/venv-cpu/pyvenv.cfg"
# sdk.runtime_roots: an SD.Next venv two levels down, and a symlink out that is not followed.
RP=$ROOT/data/apps/sdnext/venv/lib/python3.12/site-packages
mkdir -p "$RP"
: >"$ROOT/data/apps/sdnext/venv/pyvenv.cfg"
stub "$RP/torch/lib/librocblas.so" "$RP/torch/lib/libamdhip64.so"
library "$RP/torch/lib/rocblas/library"
torch_version "$RP/torch" 2.4.1+rocm6.1 6.1.40091-a8dbc0c19
mkdir -p "$ROOT/elsewhere/venv/lib/python3.12/site-packages/torch/lib"
: >"$ROOT/elsewhere/venv/pyvenv.cfg"
cp -al "$RP/torch/lib/"* "$ROOT/elsewhere/venv/lib/python3.12/site-packages/torch/lib/"
ln -s ../../elsewhere "$ROOT/data/apps/link"
# Links in a home folder are not followed either: bob's venv and conda base lead elsewhere.
mkdir -p "$ROOT/home/bob"
ln -s ../../elsewhere/venv "$ROOT/home/bob/.venv"
ln -s ../../elsewhere/venv "$ROOT/home/bob/miniconda3"
# Hostile users' environments: rocmd reads files in other people's homes, so
# mallory's torch/version.py is a FIFO (an open that blocks until a writer
# comes, which would hang every scan) and eve's a link to a file only root
# may read: neither is read, both torches are still listed.
for who in mallory eve; do
	HP=$ROOT/home/$who/.venv/lib/python3.12/site-packages
	mkdir -p "$HP"
	: >"$ROOT/home/$who/.venv/pyvenv.cfg"
	stub "$HP/torch/lib/librocblas.so" "$HP/torch/lib/libamdhip64.so"
	library "$HP/torch/lib/rocblas/library"
done
mkfifo "$ROOT/home/mallory/.venv/lib/python3.12/site-packages/torch/version.py"
mkdir -p "$ROOT/root-only"
printf "hip = '9.9.1-secret'\n" >"$ROOT/root-only/shadow"
chmod 600 "$ROOT/root-only/shadow"
ln -s ../../../../../../../root-only/shadow "$ROOT/home/eve/.venv/lib/python3.12/site-packages/torch/version.py"
# ollama's lib/ollama/rocm (its CMakeLists.txt: ggml-hip, the runtime libraries, rocblas/).
O=$ROOT/usr/lib/ollama/rocm
stub "$O/libggml-hip.so" "$O/librocblas.so.4" "$O/libamdhip64.so.6" "$O/libhipblas.so.2" "$ROOT/usr/bin/ollama"
library "$O/rocblas/library"
# LM Studio's ROCm runtime pack.
L=$ROOT/home/alice/.lmstudio/extensions/backends/vendor/linux-llama-rocm-vendor-v3
stub "$L/librocblas.so.4" "$L/libamdhip64.so.6" "$L/backend-manifest.json"
library "$L/rocblas/library"
printf '{"sdk": {"debounce_ms": 300, "extra_roots": "/srv/therock", "runtime_roots": "/data/apps"}}\n' >"$CONF"

ROCM_PATH=/tools/rock rocmd_start --root "$ROOT" || bail "rocmd did not start"
wait_for "first scan" 120 scanned 1
ctl sdk list >"$DIR/list"
cat "$DIR/list"
ctl --json sdk list >"$DIR/list.json"
A='gfx1030,gfx1100,gfx1101,gfx1102,gfx803,gfx900,gfx906,gfx908,gfx90a'
contains "TheRock under sdk.extra_roots" "$DIR/list" "^[0-9]* */srv/therock  *therock  *7.10.0 (7.10.0a20251124)  *TheRock manifest  *present  *$A"
contains "TheRock at \$ROCM_PATH" "$DIR/list" "^[0-9]* */tools/rock  *therock  *7.9.0 (7.9.0rc1)  *TheRock manifest  *present  *$A"
contains "rocm-sdk wheels in a venv, pip-owned" "$DIR/list" "/home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries  *rocm-wheels, owned by pip  *7.10.0 (7.10.0a20251124)  *TheRock manifest  *present  *$A"
contains "PyTorch ROCm wheel in a conda env, pip-owned" "$DIR/list" "/home/alice/miniconda3/envs/comfy/lib/python3.11/site-packages/torch  *torch, owned by pip  *6.2  *torch version.py  *present  *$A"
contains "PyTorch under sdk.runtime_roots" "$DIR/list" "/data/apps/sdnext/venv/lib/python3.12/site-packages/torch  *torch  *6.1  *torch version.py  *present  *$A"
contains "ollama's runtime" "$DIR/list" "/usr/lib/ollama/rocm  *ollama  *-  *none  *present  *$A"
contains "LM Studio's runtime pack" "$DIR/list" "/home/alice/.lmstudio/extensions/backends/vendor/linux-llama-rocm-vendor-v3  *lmstudio  .* present  *$A"
lacks "a CPU torch is no runtime" "$DIR/list" "venv-cpu"
contains "a FIFO for version.py: the scan ends, the torch listed without a version" "$DIR/list" "/home/mallory/.venv/lib/python3.12/site-packages/torch  *torch  *-  *none  *present"
contains "a link for version.py: not followed, no version from it" "$DIR/list" "/home/eve/.venv/lib/python3.12/site-packages/torch  *torch  *-  *none  *present"
lacks "nothing read through the link" "$DIR/list.json" "secret\\|9\\.9\\.1"
lacks "no symlink followed out of a runtime root or a home" "$DIR/list" "elsewhere"
contains "the RECORD named" "$DIR/list.json" '"record":[[:space:]]*"/home/alice/.venv/lib/python3.12/site-packages/rocm_sdk_libraries-7.10.0a20251124.dist-info/RECORD"'
contains "the release's file named" "$DIR/list.json" '"from":[[:space:]]*"/srv/therock/share/therock/therock_manifest.json"'
contains "TheRock's targets" "$DIR/list.json" '"built_for":[[:space:]]*\[[[:space:]]*"gfx1100",[[:space:]]*"gfx1101",[[:space:]]*"gfx1102",[[:space:]]*"gfx1103"'
contains "kpack archives counted" "$DIR/list.json" '"kpack_archives":[[:space:]]*2'
contains "kpack archs from their tables of contents (gfx803)" "$DIR/list.json" '"kpack_archs":[[:space:]]*\[[^]]*"gfx803"'
contains "kpack archs from their tables of contents (gfx1030)" "$DIR/list.json" '"kpack_archs":[[:space:]]*\[[^]]*"gfx1030"'
contains "hipBLASLt folder beside" "$DIR/list.json" '"hipblaslt_dir":[[:space:]]*"/srv/therock/lib/hipblaslt/library"'
contains "device wheel listed" "$DIR/list.json" '"rocm_sdk_device_gfx1103 7.10.0a20251124"'
ctl events --all --kind sdk.added >"$DIR/added"
contains "an application's runtime is no HIP SDK in events" "$DIR/added" "ROCm runtime unknown found at /usr/lib/ollama/rocm (ollama layout, version from none)"
contains "TheRock named in events" "$DIR/added" "TheRock ROCm 7.10.0 found at /srv/therock (therock layout, version from TheRock manifest)"
ctl sdk show /srv/therock >"$DIR/show"
contains "code object archs from ELF" "$DIR/show" "Code object archs .*gfx1030,gfx803"
contains "sdk show: the release and its file" "$DIR/show" "Release  *7.10.0a20251124 (from /srv/therock/share/therock/therock_manifest.json)"
contains "sdk show: TheRock's targets" "$DIR/show" "Built for  *gfx1100,gfx1101,gfx1102,gfx1103"
contains "sdk show: kpack archs" "$DIR/show" "kpack archives  *2, kernels for .*gfx803"
ctl sdk show /home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries >"$DIR/show-wheels"
contains "sdk show: pip owns the wheels" "$DIR/show-wheels" "Owner  *pip (/home/alice/.venv/lib/python3.12/site-packages/rocm_sdk_libraries-7.10.0a20251124.dist-info/RECORD)"
contains "sdk show: hipBLASLt beside" "$DIR/show-wheels" "hipBLASLt library  */home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_libraries/lib/hipblaslt/library"
contains "sdk show: the HIP runtime from rocm-sdk-core" "$DIR/show-wheels" "HIP runtime  */home/alice/.venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/libamdhip64.so.7"

# deploy.sync (report, the default) hears of a user's copy, never of pip's.
wait_for "deploy.sync told of ollama's copy" 60 has_event lib.sync "/usr/lib/ollama/rocm"
ctl events --all --kind lib.sync >"$DIR/sync"
lacks "deploy.sync not told of the pip-owned wheels" "$DIR/sync" "_rocm_sdk_libraries"
lacks "deploy.sync not told of the pip-owned torch" "$DIR/sync" "envs/comfy"
contains "deploy.sync told of TheRock's tarball" "$DIR/sync" "/srv/therock"

# A pip update overwriting the wheel's library is noticed like an SDK update.
rm "$SP/_rocm_sdk_libraries/lib/rocblas/library/Kernels.so-000-gfx1030.hsaco"
wait_for "pip-owned library change noticed" 60 has_event sdk.library_changed "_rocm_sdk_libraries"
rocmd_stop

# ---- Windows ----
W=$DIR/winroot
U="$W/c/Users/alice"
# AMD's TheRock Windows tarball where HIP_PATH points.
T="$W/c/therock"
stub "$T/bin/amdhip64_7.dll" "$T/bin/rocblas.dll" "$T/bin/hipblaslt.dll" \
	"$T/bin/hipblaslt/library/TensileLibrary_lazy_gfx1151.dat" "$T/.kpack/blas_lib_gfx1151.kpack"
library "$T/bin/rocblas/library"
manifest "$T" 7.10.0rc2
# AMD's Windows ROCm 7.2.1 wheels: rocm-sdk-core and -libraries install bin\.
WS="$U/venv-rocm/Lib/site-packages"
mkdir -p "$WS"
: >"$U/venv-rocm/pyvenv.cfg"
stub "$WS/_rocm_sdk_core/bin/amdhip64_7.dll" "$WS/_rocm_sdk_libraries/bin/rocblas.dll" \
	"$WS/_rocm_sdk_libraries/bin/hipblaslt.dll"
library "$WS/_rocm_sdk_libraries/bin/rocblas/library"
for w in rocm_sdk_core rocm_sdk_libraries rocm_sdk_device_gfx1151; do dist_info "$WS" $w 7.2.1; done
# ollama for Windows, in the user's %LOCALAPPDATA%.
OW="$U/AppData/Local/Programs/Ollama/lib/ollama/rocm"
stub "$OW/ggml-hip.dll" "$OW/rocblas.dll" "$OW/amdhip64_6.dll" "$OW/hipblas.dll"
library "$OW/rocblas/library"
# A llama.cpp ROCm zip (llama-bNNNN-bin-win-hip-radeon-x64.zip) unpacked under D:\llama.
LC="$W/d/llama/llama-b6000-bin-win-hip-radeon-x64"
stub "$LC/llama-server.exe" "$LC/llama-cli.exe" "$LC/ggml-hip.dll" "$LC/rocblas.dll" "$LC/amdhip64_6.dll"
library "$LC/rocblas/library"
mkdir -p "$W/registry"
printf '{"sdk": {"debounce_ms": 300, "runtime_roots": "D:\\\\llama"}}\n' >"$DIR/win.json"
HIP_PATH='C:\therock\' "$ROCMD" --state-dir "$DIR/winstate" --socket "$DIR/win.sock" \
	--config "$DIR/win.json" --root "$W" --sdk-layout windows || bad "windows-layout rocmd started"
SOCK=$DIR/win.sock
wait_for "windows first scan" 120 scanned 1
ctl sdk list >"$DIR/winlist"
cat "$DIR/winlist"
contains "TheRock at %HIP_PATH%" "$DIR/winlist" 'C:\\therock  *therock  *7.10.0 (7.10.0rc2)  *TheRock manifest  *present  *'"$A"
contains "Windows rocm-sdk wheels" "$DIR/winlist" 'C:\\Users\\alice\\venv-rocm\\Lib\\site-packages\\_rocm_sdk_libraries  *rocm-wheels, owned by pip  *7.2.1  *wheel METADATA  *present  *'"$A"
contains "ollama for Windows" "$DIR/winlist" 'C:\\Users\\alice\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\rocm  *ollama  .* present  *'"$A"
contains "llama.cpp ROCm build" "$DIR/winlist" 'D:\\llama\\llama-b6000-bin-win-hip-radeon-x64  *llama.cpp  .* present  *'"$A"
ctl sdk show 'C:\therock' >"$DIR/winshow-rock"
contains "a kpack that is not one is said" "$DIR/winshow-rock" ".kpack/blas_lib_gfx1151.kpack: not a kpack archive (no KPAK header)"
ctl sdk show 'C:\Users\alice\venv-rocm\Lib\site-packages\_rocm_sdk_libraries' >"$DIR/winshow"
contains "Windows wheels: the core's runtime" "$DIR/winshow" 'HIP runtime  *C:\\Users\\alice\\venv-rocm\\Lib\\site-packages\\_rocm_sdk_core\\bin\\amdhip64_7.dll'
contains "Windows wheels: the RECORD" "$DIR/winshow" 'Owner  *pip (C:\\Users\\alice\\venv-rocm\\Lib\\site-packages\\rocm_sdk_libraries-7.2.1.dist-info\\RECORD)'
rocmd_stop

harness_done
