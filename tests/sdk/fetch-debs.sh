#!/bin/sh
# Downloads Debian's real HIP and rocBLAS packages for the SDK tests, through a
# private apt configuration (nothing of the machine's own apt state is read or
# changed), into a cache folder outside the repository:
#   $ROCMD_TEST_DEBS (default /var/cache/rocmd-test-debs)/<suite>/*.deb
# bookworm ships HIP 5.2.3; trixie ships HIP 5.7.1 and rocBLAS 5.5.1. Already
# downloaded packages are kept, so a second run costs one index update at most.
# Prints the cache folder on success; exits 77 (the CTest "skip" code) with the
# reason when the archive cannot be reached.
set -eu
CACHE=${ROCMD_TEST_DEBS:-/var/cache/rocmd-test-debs}
MIRROR=${ROCMD_TEST_MIRROR:-http://deb.debian.org/debian}

# Packages per suite. The runtime (libamdhip64), the headers package holding
# /usr/share/hip/version's neighbours, hipcc (hipconfig), and rocBLAS.
pkgs_for() {
	case "$1" in
	bookworm) echo "libamdhip64-5 libamdhip64-dev hipcc librocblas0 libhsa-runtime64-1" ;;
	trixie) echo "libamdhip64-5 libamdhip64-dev hipcc librocblas0 libhsa-runtime64-1" ;;
	esac
}

fetch_suite() {
	suite=$1
	dir=$CACHE/$suite
	apt=$CACHE/.apt-$suite
	mkdir -p "$dir" "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [trusted=yes] $MIRROR $suite main" >"$apt/sources.list"
	opts="-o Dir::Etc::SourceList=$apt/sources.list -o Dir::Etc::SourceParts=/dev/null
-o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache -o Dir::State::status=/dev/null
-o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o Acquire::Retries=2
-o Acquire::Languages=none -o APT::Architecture=amd64"
	# The index is fetched once; delete $apt/lists to refresh it.
	if ! ls "$apt/lists/"*Packages* >/dev/null 2>&1; then
		# shellcheck disable=SC2086
		apt-get $opts -qq update >"$apt/update.log" 2>&1 || {
			echo "skip: cannot update the $suite index from $MIRROR:" >&2
			tail -3 "$apt/update.log" >&2
			return 77
		}
	fi
	for p in $(pkgs_for "$suite"); do
		if ls "$dir/${p}_"*.deb >/dev/null 2>&1 || [ -e "$dir/.absent-$p" ]; then
			continue
		fi
		# shellcheck disable=SC2086
		if ! (cd "$dir" && apt-get $opts -qq download "$p" >"$apt/download.log" 2>&1); then
			# A package the suite does not carry is not fatal (bookworm may
			# lack rocBLAS); a network failure is reported by the caller when
			# the runtime itself is missing.
			echo "note: $suite has no $p ($(tail -1 "$apt/download.log"))" >&2
			grep -q "Unable to locate package" "$apt/download.log" && : >"$dir/.absent-$p"
		fi
	done
	ls "$dir/libamdhip64-5_"*.deb >/dev/null 2>&1 || {
		echo "skip: could not download libamdhip64-5 for $suite" >&2
		return 77
	}
}

# Test fixtures may run this at the same time (ctest -j): one at a time.
mkdir -p "$CACHE"
exec 9>"$CACHE/.fetch.lock"
command -v flock >/dev/null && flock 9

rc=0
for s in ${ROCMD_TEST_SUITES:-bookworm trixie}; do
	fetch_suite "$s" || rc=$?
done
[ "$rc" -eq 0 ] || exit "$rc"
echo "$CACHE"
