# The sandbox the fault harness (fault.sh) and the soak (tests/load/soak.sh)
# run the real rocmd in, sourced after tests/lib/harness.sh: the one
# test-lib-daemon.sh builds. Debian trixie's HIP 5.7.1 + rocBLAS 5.5.1 tree
# under /usr (tests/fixtures/make-trees.sh; hard links: rocmd replaces files
# by rename, never writes into them), one gfx1030 GPU in a fake KFD
# topology, and the folders of two packages made of the real files: #1 the
# library and librocblas.so.0, #2 the library only, neither with the
# original's gfx803 files.
#
#	. "$HERE/../fault/sandbox.sh"
#	sandbox_check || exit 77     # T, LIBREL, BINLINK, BINREL set
#	sandbox_root "$ROOT"
#	sandbox_gpu2 "$ROOT"          # a second GPU, a gfx803
#	sandbox_pkg "$DIR/pkg/NAME" "MANIFEST TEXT" [binary]
#	sandbox_lt "$ROOT"            # hipBLASLt beside rocBLAS (LTREL)
#	sandbox_lt_folder "$DIR/pkg/NAME/hipblaslt/library" "TEXT"

TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
T=$TREES/trixie
LIBREL=usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
BINLINK=usr/lib/x86_64-linux-gnu/librocblas.so.0
BINREL=usr/lib/x86_64-linux-gnu/librocblas.so.0.1
LTREL=usr/lib/x86_64-linux-gnu/hipblaslt/library

# sandbox_check: status 1, saying why, without the real tree.
sandbox_check() {
	[ -f "$T/$LIBREL/TensileLibrary.dat" ] && [ -f "$T/$BINREL" ] && return 0
	echo "skip: no real SDK trees in $TREES (tests/fixtures/make-trees.sh could not download Debian's packages)"
	return 1
}

# sandbox_root ROOT: the tree and the GPU under ROOT.
sandbox_root() {
	mkdir -p "$1"
	cp -al "$T/usr" "$1/usr"
	_n=$1/sys/class/kfd/kfd/topology/nodes
	mkdir -p "$_n/0" "$_n/1/mem_banks/0" "$1/sys/class/kfd/kfd/proc"
	printf 'cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n' >"$_n/0/properties"
	printf 'cpu_cores_count 0\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 100300\nvendor_id 4098\ndevice_id 29631\nlocation_id 49408\n' >"$_n/1/properties"
	printf 'heap_type 1\nsize_in_bytes 536870912\n' >"$_n/1/mem_banks/0/properties"
}

# sandbox_gpu2 ROOT: a second GPU under ROOT, a gfx803 (Polaris), which the
# vendor's library serves and the packages lack: a deploy of either is a
# merged library then.
sandbox_gpu2() {
	_n=$1/sys/class/kfd/kfd/topology/nodes
	mkdir -p "$_n/2/mem_banks/0"
	printf 'cpu_cores_count 0\nsimd_count 36\nsimd_per_cu 4\ngfx_target_version 80003\nvendor_id 4098\ndevice_id 26591\nlocation_id 768\n' >"$_n/2/properties"
	printf 'heap_type 1\nsize_in_bytes 4294967296\n' >"$_n/2/mem_banks/0/properties"
}

# sandbox_pkg DIR MANIFEST [binary]: a package folder of the real library
# files (and librocblas.so.0), its TensileManifest.txt holding MANIFEST.
sandbox_pkg() {
	mkdir -p "$1/library"
	cp -l "$T/$LIBREL/TensileLibrary.dat" "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$1/library/"
	echo "$2" >"$1/library/TensileManifest.txt"
	[ -z "${3:-}" ] || cp -l "$T/$BINREL" "$1/librocblas.so.0"
}

# sandbox_lt_folder DIR TEXT: hipBLASLt's library files for the gfx1030 in
# DIR (its lazy index, a kernel index, code objects: hard links to the real
# gfx1030 one), hipblasltExtOpLibrary.dat holding TEXT.
sandbox_lt_folder() {
	mkdir -p "$1"
	printf '\x82\xa4type\xa6Master\xa9libraries\x90' >"$1/TensileLibrary_lazy_gfx1030.dat"
	printf '\x90' >"$1/TensileLibrary_HH_HH_HA_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_gfx1030.dat"
	echo "$2" >"$1/hipblasltExtOpLibrary.dat"
	for _c in Kernels.so-000-gfx1030.hsaco extop_gfx1030.co; do
		cp -l "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$1/$_c"
	done
}

# sandbox_lt ROOT: hipBLASLt beside the SDK's rocBLAS under ROOT, as
# hipBLASLt's loader finds it: libhipblaslt.so.0 (a stand-in: only its name
# counts) beside librocblas.so.0, its library in hipblaslt/library (LTREL).
sandbox_lt() {
	printf 'stand-in\n' >"$1/usr/lib/x86_64-linux-gnu/libhipblaslt.so.0"
	sandbox_lt_folder "$1/$LTREL" "the vendor's hipBLASLt"
}
